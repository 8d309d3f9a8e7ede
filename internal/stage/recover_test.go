package stage

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/streams"
)

func ollamaText(content string) []byte {
	c, _ := json.Marshal(content)
	return fmt.Appendf(nil, `{"model":"qwen2.5:7b","created_at":"2026-11-30T10:00:00Z","message":{"role":"assistant","content":%s},"done_reason":"stop","done":true}`, c)
}

func TestPipeline_text_recovery_only_when_tolerant(t *testing.T) {
	p := startPipeline(t)
	text := "Sure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"

	p.publish("txt-strict", "ollama", ollamaText(text))
	rs := p.waitResults("txt-strict", 1)
	if rs[0]["status"] != "no_tool_calls" {
		t.Fatalf("without tolerance: %v, want no_tool_calls", rs[0])
	}

	p.publish("txt-tolerant", "ollama", ollamaText(text), streams.HeaderTolerant, "true")
	rs = p.waitResults("txt-tolerant", 1)
	if rs[0]["status"] != "executed" || rs[0]["source"] != "textjson" || rs[0]["tool"] != "get_weather" {
		t.Fatalf("tolerant: %v, want get_weather executed with source textjson", rs[0])
	}
	if p.executed.Load() != 1 {
		t.Fatalf("executed %d, want 1", p.executed.Load())
	}
}

func TestPipeline_recovered_calls_must_name_a_tool_and_pass_its_schema(t *testing.T) {
	p := startPipeline(t)
	// Two calls in one text: one names no registered tool, one fails the
	// schema (city must be non-empty); a third, truncated, is not a call.
	text := `<tool_call>{"name": "search", "arguments": {"q": "cats"}}</tool_call>` +
		`<tool_call>{"name": "get_weather", "arguments": {"city": ""}}</tool_call>` +
		`<tool_call>{"name": "get_weather", "arguments": {"city": "Par`
	p.publish("txt-discard", "ollama", ollamaText(text), streams.HeaderTolerant, "true")
	rs := p.waitResults("txt-discard", 3)
	var got []string
	for _, r := range rs {
		got = append(got, fmt.Sprint(r["call_id"], ":", r["status"]))
		if r["status"] != "discarded" {
			t.Errorf("%v: want discarded", r)
		}
		if len(fmt.Sprint(r["errors"])) < 10 {
			t.Errorf("%v: a discard must say why", r)
		}
	}
	if len(rs) != 3 {
		t.Fatalf("results %v, want 3 discards", got)
	}
	if p.executed.Load() != 0 {
		t.Fatal("a discarded call executed")
	}
}

func TestPipeline_failed_generation_is_recovered_when_tolerant(t *testing.T) {
	p := startPipeline(t)
	body, err := os.ReadFile("../../testdata/provider-fixtures/openai-chat/groq-gpt-oss-120b-tool-use-failed.error.json")
	if err != nil {
		t.Fatal(err)
	}
	p.publish("groq-failed", "openai-chat", body, streams.HeaderTolerant, "true")
	rs := p.waitResults("groq-failed", 1)
	// The failed generation names get_something_by_name, which is not a
	// registered tool: recovered, then discarded with the reason.
	if rs[0]["status"] != "discarded" || !strings.Contains(fmt.Sprint(rs[0]["errors"]), "get_something_by_name") {
		t.Fatalf("%v: want the failed generation recovered and discarded (unregistered tool)", rs[0])
	}
	p.publish("groq-strict", "openai-chat", body)
	rs = p.waitResults("groq-strict", 1)
	if rs[0]["status"] != "rejected" || !strings.Contains(fmt.Sprint(rs[0]["errors"]), "tool_use_failed") && !strings.Contains(fmt.Sprint(rs[0]["errors"]), "provider error") {
		t.Fatalf("%v: without tolerance a provider error is recorded as rejected", rs[0])
	}
}

func TestPipeline_tolerant_provider_setting_recovers_without_the_header(t *testing.T) {
	p := startRig(t, rig{configure: func(c *Config) { c.TolerantProviders = []string{"ollama"} }})
	text := "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}\n</tool_call>"
	p.publish("tol-ollama", "ollama", ollamaText(text))
	if rs := p.waitResults("tol-ollama", 1); rs[0]["status"] != "executed" || rs[0]["source"] != "textjson" {
		t.Fatalf("%v: want the call recovered for a tolerant provider", rs[0])
	}
	// Another provider's text stays text.
	body := []byte(`{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Quito\"}}</tool_call>"},"finish_reason":"stop"}]}`)
	p.publish("tol-openai", "openai-chat", body)
	if rs := p.waitResults("tol-openai", 1); rs[0]["status"] != "no_tool_calls" {
		t.Fatalf("%v: want no_tool_calls for a provider not listed", rs[0])
	}
}
