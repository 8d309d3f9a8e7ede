package provider

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/parse"
)

// A key spelled in another case is not the documented key: encoding/json v1
// folded "NAME" onto name and the last one won, so the call was judged as
// delete_customer_account.
func TestParseResponse_keys_match_exactly_not_case_folded(t *testing.T) {
	for _, test := range []struct{ provider, body string }{
		{OpenAIChat, `{"choices":[{"index":0,"message":{"tool_calls":[{"id":"a","function":{"name":"get_weather","NAME":"delete_customer_account","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`},
		{OpenAIResponses, `{"status":"completed","output":[{"type":"function_call","id":"i","call_id":"a","name":"get_weather","Name":"delete_customer_account","arguments":"{}"}]}`},
		{Anthropic, `{"content":[{"type":"tool_use","id":"a","name":"get_weather","NAME":"delete_customer_account","input":{}}],"stop_reason":"tool_use"}`},
		{Gemini, `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather","Name":"delete_customer_account","args":{}}}]},"finishReason":"STOP"}]}`},
		{Ollama, `{"message":{"tool_calls":[{"function":{"name":"get_weather","NAME":"delete_customer_account","arguments":{}}}]},"done":true,"done_reason":"stop"}`},
	} {
		t.Run(test.provider, func(t *testing.T) {
			r, err := ParseResponse(test.provider, []byte(test.body))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Calls) != 1 || r.Calls[0].Name != "get_weather" {
				t.Fatalf("calls %+v, want one get_weather", r.Calls)
			}
		})
	}
	t.Run("a key in the wrong case alone is not the key", func(t *testing.T) {
		r, err := ParseResponse(OpenAIChat, []byte(`{"choices":[{"index":0,"message":{"tool_calls":[{"id":"a","function":{"NAME":"delete_customer_account","arguments":"{}"}}]}}]}`))
		if err != nil || len(r.Calls) != 1 || r.Calls[0].Name != "" {
			t.Fatalf("calls %+v, %v; want one call with no name", r.Calls, err)
		}
	})
}

// A body or event naming one key twice is refused, with the key and its
// offset; v1 took the last one.
func TestParseResponse_duplicate_key_is_refused_with_key_and_offset(t *testing.T) {
	for _, test := range []struct {
		provider, body string
		streamed       bool
	}{
		{OpenAIChat, `{"choices":[{"index":0,"message":{"tool_calls":[{"id":"a","function":{"name":"get_weather","name":"delete_customer_account","arguments":"{}"}}]}}]}`, false},
		{OpenAIChat, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"get_weather","name":"delete_customer_account"}}]}}]}`, true},
		{OpenAIResponses, `{"status":"completed","output":[{"type":"function_call","id":"i","call_id":"a","name":"get_weather","name":"delete_customer_account","arguments":"{}"}]}`, false},
		{OpenAIResponses, `{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"i","name":"get_weather","name":"delete_customer_account"}}`, true},
		{Anthropic, `{"content":[{"type":"tool_use","id":"a","name":"get_weather","name":"delete_customer_account","input":{}}],"stop_reason":"tool_use"}`, false},
		{Anthropic, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"get_weather","name":"delete_customer_account","input":{}}}`, true},
		{Gemini, `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather","name":"delete_customer_account","args":{}}}]}}]}`, false},
		{Ollama, `{"message":{"tool_calls":[{"function":{"name":"get_weather","name":"delete_customer_account","arguments":{}}}]},"done":true}`, true},
		{Anthropic, `{"content":[{"type":"tool_use","id":"a","name":"f","input":{"id":1,"id":2}}],"stop_reason":"tool_use"}`, false},
	} {
		t.Run(test.provider, func(t *testing.T) {
			var err error
			if test.streamed {
				a, _ := NewAccumulator(test.provider)
				err = a.Add([]byte(test.body))
				if len(a.Response().Calls) != 0 {
					t.Fatalf("a refused event started calls %+v", a.Response().Calls)
				}
			} else {
				_, err = ParseResponse(test.provider, []byte(test.body))
			}
			if !errors.Is(err, ErrDuplicateKey) {
				t.Fatalf("err = %v, want ErrDuplicateKey", err)
			}
			key := `"name"`
			if strings.Contains(test.body, `"id":2`) {
				key = `"id"`
			}
			at := strings.LastIndex(test.body, key+":") // the second spelling
			if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("duplicate key %s at byte %d ", key, at)) || !strings.HasPrefix(msg, "provider: "+test.provider+": ") {
				t.Fatalf("error %q does not name the provider, the key and its offset", msg)
			}
		})
	}
}

// Arguments keep every byte the body encoded: raw invalid UTF-8 and lone
// surrogate escapes are not turned into U+FFFD on the way, so the parse gate
// sees them and refuses that call (invalid_json with the offset) while its
// sibling goes on. encoding/json v1 (canon.JSON of an object, a string field)
// wrote U+FFFD and the call executed with text the model never wrote.
func TestCalls_arguments_keep_invalid_utf8_exactly(t *testing.T) {
	const (
		bad  = "{\"city\":\"Par\xffis\"}"     // raw invalid byte, offset 12
		lone = "{\"city\":\"x\xed\xa0\x80\"}" // \ud800 decoded from the outer string, as WTF-8
	)
	for _, test := range []struct {
		name, provider string
		events         []string // one whole body when len == 1 and whole
		whole          bool
		want           []string // arguments of each call
	}{
		{"chat raw byte in arguments string", OpenAIChat, []string{"{\"choices\":[{\"index\":0,\"message\":{\"tool_calls\":[" +
			"{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"city\\\":\\\"Par\xffis\\\"}\"}}," +
			"{\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"city\\\":\\\"x\\ud800\\\"}\"}}," +
			"{\"id\":\"c\",\"function\":{\"name\":\"h\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}"},
			true, []string{bad, lone, `{"city":"Paris"}`}},
		{"chat inner escape kept as text", OpenAIChat, []string{`{"choices":[{"index":0,"message":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"city\":\"\\ud800\"}"}}]}}]}`},
			true, []string{`{"city":"\ud800"}`}},
		{"chat object arguments", OpenAIChat, []string{"{\"choices\":[{\"index\":0,\"message\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":{\"city\":\"Par\xffis\"}}}]}}]}"},
			true, []string{bad}},
		{"chat stream split inside a character and a surrogate pair", OpenAIChat, []string{
			"{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"s\\\":\\\"\xc3\"}}]}}]}",
			"{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\xa9\\ud83d\"}}]}}]}",
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\ude00\"}"}}]},"finish_reason":"tool_calls"}]}`},
			false, []string{`{"s":"é😀"}`}},
		{"responses function_call and custom tool input", OpenAIResponses, []string{"{\"status\":\"completed\",\"output\":[" +
			"{\"type\":\"function_call\",\"id\":\"i\",\"call_id\":\"a\",\"name\":\"f\",\"arguments\":\"{\\\"city\\\":\\\"x\\ud800\\\"}\"}," +
			"{\"type\":\"custom_tool_call\",\"id\":\"j\",\"call_id\":\"b\",\"name\":\"sh\",\"input\":\"rm \xff\\udc00\"}]}"},
			true, []string{lone, "{\"input\":\"rm \xff\xed\xb0\x80\"}"}}, // free text as {"input": ...}, its bytes kept
		{"anthropic input object", Anthropic, []string{"{\"content\":[{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"f\",\"input\":{\"city\":\"Par\xffis\"}}," +
			`{"type":"tool_use","id":"b","name":"g","input":{"city":"x\ud800"}},` +
			`{"type":"tool_use","id":"c","name":"h","input":{"city":"Paris"}}],"stop_reason":"tool_use"}`},
			true, []string{bad, `{"city":"x\ud800"}`, `{"city":"Paris"}`}},
		{"anthropic input_json_delta", Anthropic, []string{
			`{"type":"message_start","message":{"id":"m","content":[]}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"f","input":{}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"x\ud800\"}"}}`,
			`{"type":"content_block_stop","index":0}`, `{"type":"message_stop"}`},
			false, []string{lone}},
		{"gemini args object", Gemini, []string{"{\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":{\"city\":\"Par\xffis\"}}}," +
			`{"functionCall":{"name":"h","args":{"city":"Paris"}}}]},"finishReason":"STOP"}]}`},
			true, []string{bad, `{"city":"Paris"}`}},
		{"gemini partialArgs string", Gemini, []string{
			`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}}]}}]}`,
			`{"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.city","stringValue":"x\ud800","willContinue":true}],"willContinue":true}}]}}]}`,
			`{"candidates":[{"content":{"parts":[{"functionCall":{}}]},"finishReason":"STOP"}]}`},
			false, []string{lone}},
		{"ollama arguments object", Ollama, []string{"{\"message\":{\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":{\"city\":\"Par\xffis\"}}}," +
			`{"function":{"name":"h","arguments":{"city":"Paris"}}}]},"done":true,"done_reason":"stop"}`},
			true, []string{bad, `{"city":"Paris"}`}},
	} {
		t.Run(test.name, func(t *testing.T) {
			var r Response
			if test.whole {
				var err error
				if r, err = ParseResponse(test.provider, []byte(test.events[0])); err != nil {
					t.Fatal(err)
				}
			} else {
				r = feed(t, test.provider, test.events...).Response()
			}
			if len(r.Calls) != len(test.want) {
				t.Fatalf("got %d calls %+v, want %d", len(r.Calls), r.Calls, len(test.want))
			}
			for i, want := range test.want {
				if got := r.Calls[i].Arguments; got != want {
					t.Errorf("call %d arguments %q, want %q byte for byte", i, got, want)
				}
			}
		})
	}
}

// What the parse gate makes of such arguments: invalid_json at the byte
// that is not UTF-8 or at the lone escape, never a call with U+FFFD.
func TestCalls_invalid_utf8_arguments_are_invalid_json_at_the_offset(t *testing.T) {
	r, err := ParseResponse(OpenAIChat, []byte("{\"choices\":[{\"index\":0,\"message\":{\"tool_calls\":["+
		"{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"city\\\":\\\"Par\xffis\\\"}\"}},"+
		"{\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"city\\\":\\\"x\\ud800\\\"}\"}},"+
		"{\"id\":\"c\",\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"city\\\":\\\"\\\\ud800\\\"}\"}},"+
		"{\"id\":\"d\",\"function\":{\"name\":\"h\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]}}]}"))
	if err != nil {
		t.Fatal(err)
	}
	for i, off := range []int{12, 10, 9} {
		_, _, perr := parse.Strict([]byte(r.Calls[i].Arguments), parse.Limits{})
		if perr == nil || perr.Code != parse.CodeInvalidJSON || perr.Offset != off {
			t.Errorf("call %d %q: %v, want invalid_json at byte %d", i, r.Calls[i].Arguments, perr, off)
		}
	}
	if c, _, perr := parse.Strict([]byte(r.Calls[3].Arguments), parse.Limits{}); perr != nil || string(c) != `{"city":"Paris"}` {
		t.Errorf("sibling call: %s %v", c, perr)
	}
}

// The assistant's text reaches text recovery byte for byte.
func TestResponse_text_keeps_invalid_utf8_exactly(t *testing.T) {
	for _, test := range []struct{ provider, body, want string }{
		{OpenAIChat, "{\"choices\":[{\"index\":0,\"message\":{\"content\":\"a\xffb\\ud800\"},\"finish_reason\":\"stop\"}]}", "a\xffb\xed\xa0\x80"},
		{OpenAIChat, "{\"choices\":[{\"index\":0,\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]},\"finish_reason\":\"stop\"}]}", "a\xffb"},
		{OpenAIResponses, "{\"status\":\"completed\",\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"a\xffb\"}]}]}", "a\xffb"},
		{Anthropic, "{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}],\"stop_reason\":\"end_turn\"}", "a\xffb"},
		{Gemini, "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\xffb\"}]},\"finishReason\":\"STOP\"}]}", "a\xffb"},
		{Ollama, "{\"message\":{\"content\":\"a\xffb\"},\"done\":true,\"done_reason\":\"stop\"}", "a\xffb"},
	} {
		t.Run(test.provider, func(t *testing.T) {
			r, err := ParseResponse(test.provider, []byte(test.body))
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != test.want {
				t.Fatalf("text %q, want %q", r.Text, test.want)
			}
		})
	}
	r, err := ParseResponse(OpenAIChat, []byte("{\"error\":{\"code\":\"tool_use_failed\",\"message\":\"m\",\"failed_generation\":\"x\xff\"}}"))
	if err != nil || r.Error == nil || r.Error.FailedGeneration != "x\xff" {
		t.Fatalf("failed_generation %+v %v, want \"x\\xff\"", r.Error, err)
	}
}
