package textcall

import (
	"strings"
	"testing"
)

// MiniMax M2 and Step-3 parameters are untyped text: Params keeps each raw
// value, so a string zip declared by the schema stays "94107" while an
// integer count becomes 3.
func TestRecover_invoke_params_follow_the_schema(t *testing.T) {
	for _, text := range []string{
		"<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"zip\">94107</parameter>\n<parameter name=\"n\">3</parameter>\n</invoke>\n</minimax:tool_call>",
		"<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"f\"><steptml:parameter name=\"zip\">94107</steptml:parameter><steptml:parameter name=\"n\">3</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
	} {
		calls, discards := Recover(text)
		if len(calls) != 1 || len(discards) != 0 || calls[0].Params["zip"] != "94107" {
			t.Fatalf("calls %+v, discards %+v", calls, discards)
		}
		args, _, err := TypeArgs(calls[0].Params, func(p string) []string {
			return map[string][]string{"zip": {"string"}, "n": {"integer"}}[p]
		})
		if err != nil || string(args) != `{"n":3,"zip":"94107"}` {
			t.Fatalf("%s: arguments %s (%v), want zip a string and n an integer", calls[0].Format, args, err)
		}
	}
}

// Prose that only looks like a marker is no call and no Discard: Python's
// functools module, a REPL prompt, the word invoke.
func TestRecover_batch_b_markers_in_prose_are_silent(t *testing.T) {
	for _, text := range []string{
		"Use functools.partial, or functools.reduce(f, xs); import functools.",
		">>> import os\n>>> os.getcwd()\n'/home'",
		"We invoke name resolution first; see <parameter name> in the docs.",
		"The [TOOL] list and the function call syntax f(x) are explained below.",
	} {
		if calls, discards := Recover(text); len(calls) != 0 || len(discards) != 0 {
			t.Errorf("%q: calls %v, discards %+v", text, summary(calls), discards)
		}
	}
}

// A block with more invokes than are read says so: the rest is a Discard,
// never dropped in silence.
func TestRecover_invokes_beyond_the_bound_are_a_discard(t *testing.T) {
	var b strings.Builder
	b.WriteString("<minimax:tool_call>")
	for range maxMarkers + 1 {
		b.WriteString(`<invoke name="f"><parameter name="a">1</parameter></invoke>`)
	}
	b.WriteString("</minimax:tool_call>")
	calls, discards := Recover(b.String())
	found := false
	for _, d := range discards {
		found = found || strings.Contains(d.Reason, "invokes in one block")
	}
	if !found || len(calls) > MaxCalls {
		t.Fatalf("%d calls, discards %+v; want the invokes past the bound discarded", len(calls), discards)
	}
}
