package textcall

import (
	"strings"
	"testing"
)

// Floods of the markers these fixes read stay bounded: no call from junk
// and few Discards (each unit repeated to 1 MiB).
func TestRecover_fixed_dialect_marker_floods_are_bounded(t *testing.T) {
	for _, unit := range []string{
		"<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁begin｜>f<｜tool▁sep｜>{}",
		"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜>",
		"<｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		"<|DSML|function_calls>", "<|DSML|invoke name=\"f\">", "|DSML|", "DSML ",
		"<tool_call>{'name': 'f', 'arguments': {'a': [", "<tool_call><function=f>x</function>",
		"<|tool_call_begin|>f:0<|tool_call_argument_begin|>{'a': (",
	} {
		text := strings.Repeat(unit, 1<<20/len(unit))
		calls, discards := Recover(text)
		if len(calls) > MaxCalls {
			t.Errorf("%q: %d calls", unit, len(calls))
		}
		if len(discards) > 2*maxMarkers+MaxCalls {
			t.Errorf("%q: %d discards", unit, len(discards))
		}
	}
}
