package gates

import (
	"testing"

	"github.com/toolgate/toolgate/internal/call"
)

// OLMo 3 writes its calls without <function_calls> at times: the gate
// reads a text that is only bare calls of registered tools (issue 32), and
// leaves a bare call of an unregistered name as prose.
func TestRecover_bare_pythonic_call_of_a_registered_tool(t *testing.T) {
	g := typedParseGate(t)
	out := recoverText(t, g, `lookup(zip="94107", count=2)`)
	if len(out) != 1 || out[0].Status != call.Parsed || out[0].ToolName != "lookup" || string(out[0].Arguments) != `{"count":2,"zip":"94107"}` {
		t.Fatalf("got %+v", out)
	}
	out = recoverText(t, g, `wipe(zip="94107")`)
	if len(out) != 1 || out[0].Status != call.NoToolCalls {
		t.Fatalf("an unregistered bare call: %+v", out)
	}
}
