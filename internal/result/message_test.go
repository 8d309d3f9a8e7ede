package result

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func okOutcome(provider string) Outcome {
	return Outcome{
		Provider: provider, CallID: "tg-1", ProviderCallID: "prov-1", Tool: "create_invoice",
		Status: "executed", OK: true, Result: json.RawMessage(`{"invoice_id": "inv_9", "note": "a<b & c>d"}`),
	}
}

func failedOutcome(provider string) Outcome {
	return Outcome{
		Provider: provider, CallID: "tg-2", ProviderCallID: "prov-2", Tool: "create_invoice",
		Status: "schema_invalid", Errors: []string{"line_items: must have at least 1 item"},
	}
}

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("message is not a JSON object: %v\n%s", err, raw)
	}
	return m
}

func TestMessage_provider_shapes(t *testing.T) {
	okText := `{"invoice_id":"inv_9","note":"a<b & c>d"}`
	failText := Text(failedOutcome(""))
	for _, test := range []struct {
		name string
		o    Outcome
		want map[string]any
	}{
		{"openai-chat ok", okOutcome("openai-chat"),
			map[string]any{"role": "tool", "tool_call_id": "prov-1", "content": okText}},
		{"openai-chat failure", failedOutcome("openai-chat"),
			map[string]any{"role": "tool", "tool_call_id": "prov-2", "content": failText}},
		{"unknown provider gets openai-chat shape", failedOutcome("llama.cpp"),
			map[string]any{"role": "tool", "tool_call_id": "prov-2", "content": failText}},
		{"empty provider gets openai-chat shape", okOutcome(""),
			map[string]any{"role": "tool", "tool_call_id": "prov-1", "content": okText}},
		{"openai-responses ok", okOutcome("openai-responses"),
			map[string]any{"type": "function_call_output", "call_id": "prov-1", "output": okText}},
		{"openai-responses failure", failedOutcome("openai-responses"),
			map[string]any{"type": "function_call_output", "call_id": "prov-2", "output": failText}},
		{"anthropic ok", okOutcome("anthropic"),
			map[string]any{"type": "tool_result", "tool_use_id": "prov-1", "content": okText, "is_error": false}},
		{"anthropic failure", failedOutcome("anthropic"),
			map[string]any{"type": "tool_result", "tool_use_id": "prov-2", "content": failText, "is_error": true}},
		{"gemini ok", okOutcome("gemini"),
			map[string]any{"functionResponse": map[string]any{"name": "create_invoice", "id": "prov-1",
				"response": map[string]any{"output": map[string]any{"invoice_id": "inv_9", "note": "a<b & c>d"}}}}},
		{"gemini failure", failedOutcome("gemini"),
			map[string]any{"functionResponse": map[string]any{"name": "create_invoice", "id": "prov-2",
				"response": map[string]any{"error": failText}}}},
		{"ollama ok", okOutcome("ollama"),
			map[string]any{"role": "tool", "tool_name": "create_invoice", "tool_call_id": "prov-1", "content": okText}},
		{"ollama failure", failedOutcome("ollama"),
			map[string]any{"role": "tool", "tool_name": "create_invoice", "tool_call_id": "prov-2", "content": failText}},
	} {
		t.Run(test.name, func(t *testing.T) {
			raw, err := Message(test.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := decode(t, raw); !reflect.DeepEqual(got, test.want) {
				t.Fatalf("got  %v\nwant %v", got, test.want)
			}
			if strings.Contains(string(raw), `\u003c`) {
				t.Fatalf("HTML-escaped output: %s", raw)
			}
		})
	}
}

func TestMessage_missing_provider_id_falls_back_to_call_id(t *testing.T) {
	for _, test := range []struct {
		provider, field string
	}{
		{"openai-chat", "tool_call_id"},
		{"openai-responses", "call_id"},
		{"anthropic", "tool_use_id"},
	} {
		t.Run(test.provider, func(t *testing.T) {
			o := failedOutcome(test.provider)
			o.ProviderCallID = ""
			raw, err := Message(o)
			if err != nil {
				t.Fatal(err)
			}
			if got := decode(t, raw)[test.field]; got != "tg-2" {
				t.Fatalf("%s = %v, want toolgate's call id tg-2", test.field, got)
			}
		})
	}
}

func TestMessage_gemini_and_ollama_without_provider_id_omit_it(t *testing.T) {
	for _, provider := range []string{"gemini", "ollama"} {
		t.Run(provider, func(t *testing.T) {
			o := okOutcome(provider)
			o.ProviderCallID = ""
			raw, err := Message(o)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(raw), "tg-1") || strings.Contains(string(raw), `"id"`) || strings.Contains(string(raw), "tool_call_id") {
				t.Fatalf("message carries an id the provider never gave: %s", raw)
			}
		})
	}
}

func TestMessage_without_any_id_fails_for_id_paired_providers(t *testing.T) {
	for _, provider := range []string{"openai-chat", "openai-responses", "anthropic", "other"} {
		o := failedOutcome(provider)
		o.ProviderCallID, o.CallID = "", ""
		if _, err := Message(o); !errors.Is(err, ErrNoCallID) {
			t.Errorf("%s: err = %v, want ErrNoCallID", provider, err)
		}
	}
}

func TestMessage_gemini_without_tool_name_fails(t *testing.T) {
	o := failedOutcome("gemini")
	o.Tool = ""
	if _, err := Message(o); !errors.Is(err, ErrNoToolName) {
		t.Fatalf("err = %v, want ErrNoToolName", err)
	}
}

func TestMessage_gemini_result_that_is_not_json_is_a_string_output(t *testing.T) {
	o := okOutcome("gemini")
	o.Result = json.RawMessage(`plain text result`)
	raw, err := Message(o)
	if err != nil {
		t.Fatal(err)
	}
	resp := decode(t, raw)["functionResponse"].(map[string]any)["response"].(map[string]any)
	if resp["output"] != "plain text result" {
		t.Fatalf("response = %v", resp)
	}
}

func TestMessage_gemini_array_result_is_wrapped_in_an_object(t *testing.T) {
	o := okOutcome("gemini")
	o.Result = json.RawMessage(`[1,2]`)
	raw, err := Message(o)
	if err != nil {
		t.Fatal(err)
	}
	resp := decode(t, raw)["functionResponse"].(map[string]any)["response"].(map[string]any)
	if !reflect.DeepEqual(resp["output"], []any{1.0, 2.0}) {
		t.Fatalf("response = %v", resp)
	}
}

func BenchmarkMessage_anthropic_failure(b *testing.B) {
	o := failedOutcome("anthropic")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Message(o); err != nil {
			b.Fatal(err)
		}
	}
}
