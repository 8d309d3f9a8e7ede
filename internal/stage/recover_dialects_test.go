package stage

import (
	"testing"

	"github.com/toolgate/toolgate/streams"
)

// A tolerant response written in MiniMax M2's XML notation or in
// Phi-4-mini's functools list goes through every gate like any other call
// and executes once.
func TestPipeline_minimax_and_phi4mini_text_calls_execute_once(t *testing.T) {
	p := startPipeline(t)
	for i, test := range []struct{ id, text string }{
		{"txt-minimax", "<think>\nI should look up the weather.\n</think>\n\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n</minimax:tool_call>"},
		{"txt-phi4mini", `functools[{"name": "get_weather", "arguments": {"city": "Lima"}}]`},
	} {
		p.publish(test.id, "ollama", ollamaText(test.text), streams.HeaderTolerant, "true")
		rs := p.waitResults(test.id, 1)
		if len(rs) != 1 || rs[0]["status"] != "executed" || rs[0]["tool"] != "get_weather" {
			t.Fatalf("%s: results %v, want get_weather executed once", test.id, rs)
		}
		if n := p.executed.Load(); n != int32(i+1) {
			t.Fatalf("%s: executed %d times in all, want %d", test.id, n, i+1)
		}
	}
}
