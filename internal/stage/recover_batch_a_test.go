package stage

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolgate/toolgate/streams"
)

// openaiChatText is an OpenAI chat completion whose assistant content is text.
func openaiChatText(content string) []byte {
	c, _ := json.Marshal(content)
	return fmt.Appendf(nil, `{"id":"chatcmpl-1","object":"chat.completion","model":"glm-4.6","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}]}`, c)
}

// A tolerant response written in Kimi K2's special tokens (ollama content)
// or in GLM-4.6's <arg_key>/<arg_value> markup (openai-chat content) goes
// through every gate like any other call and executes once; a Kimi section
// the model never closed is discarded, never executed.
func TestPipeline_kimi_and_glm_text_calls_execute_once(t *testing.T) {
	p := startPipeline(t)
	kimi := "I'll check.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Beijing\", \"units\": \"c\"}<|tool_call_end|><|tool_calls_section_end|>"
	glm := "<think>The user wants the weather in Oslo.</think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n<arg_key>units</arg_key>\n<arg_value>celsius</arg_value>\n</tool_call>"
	for i, test := range []struct {
		id, provider string
		body         []byte
	}{
		{"txt-kimi", "ollama", ollamaText(kimi)},
		{"txt-glm", "openai-chat", openaiChatText(glm)},
	} {
		p.publish(test.id, test.provider, test.body, streams.HeaderTolerant, "true")
		rs := p.waitResults(test.id, 1)
		if len(rs) != 1 || rs[0]["status"] != "executed" || rs[0]["tool"] != "get_weather" {
			t.Fatalf("%s: results %v, want get_weather executed once", test.id, rs)
		}
		if n := p.executed.Load(); n != int32(i+1) {
			t.Fatalf("%s: executed %d times in all, want %d", test.id, n, i+1)
		}
	}
	cut := "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Lima\"}<|tool_call_end|>"
	p.publish("txt-kimi-cut", "ollama", ollamaText(cut), streams.HeaderTolerant, "true")
	rs := p.waitResults("txt-kimi-cut", 1)
	if rs[0]["status"] != "discarded" || p.executed.Load() != 2 {
		t.Fatalf("unclosed Kimi section: %v (executed %d), want discarded and nothing more executed", rs[0], p.executed.Load())
	}
}
