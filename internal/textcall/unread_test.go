package textcall

import "testing"

// A text that carries a peer's tool-call marker but yields no call is a
// Discard named after the peer, never plain text (issue 32: Laguna's
// <user> spelling and stray Glimmer invokes passed in silence).
func TestRecover_unread_peer_markers_are_discards(t *testing.T) {
	for _, c := range []struct{ text, family string }{
		{"<user>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></user>", "laguna"},
		{"Sure.\n<user>get_current_date\n<arg_key>tz</arg_key><arg_value>UTC</arg_value></user> done", "laguna"},
		{"<atem:invoke name=\"f\"><atem:parameter name=\"a\">1</atem:parameter></atem:invoke>", "glimmer"},
		{"<longcat_tool_call> not json", "longcat"},
		{"ok <|tool_call|> nothing follows", "granite"},
	} {
		calls, discards := Recover(c.text)
		if len(calls) != 0 || len(discards) == 0 {
			t.Errorf("%q: calls %v, discards %+v; want a discard", c.text, summary(calls), discards)
			continue
		}
		found := false
		for _, d := range discards {
			found = found || d.Format == c.family
		}
		if c.family == "laguna" || c.family == "glimmer" {
			if !found || len(discards) != 1 {
				t.Errorf("%q: discards %+v; want one of %s", c.text, discards, c.family)
			}
		}
	}
}

// Prose that names a tag, and markers already read or discarded, add no
// Discard of their own.
func TestRecover_unread_leaves_prose_and_read_calls(t *testing.T) {
	for _, text := range []string{
		"<user>hello there</user>",
		"Write <user> then the name.",
		"<atem:function_calls>\n<atem:invoke name=\"f\">\n<atem:parameter name=\"a\">1</atem:parameter>\n</atem:invoke>\n</atem:function_calls>",
		"<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\":1}<|tool_call_end|><|tool_calls_section_end|>",
	} {
		calls, discards := Recover(text)
		if len(discards) != 0 || len(calls) > 1 {
			t.Errorf("%q: calls %v, discards %+v", text, summary(calls), discards)
		}
	}
}
