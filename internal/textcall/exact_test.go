package textcall

import (
	"strings"
	"testing"
)

// A call written as text whose arguments are not UTF-8 (a raw invalid byte,
// a lone \ud800 escape, a Python '\udc00') is discarded with the reason,
// never recovered with U+FFFD in place of what the model wrote.
func TestRecover_arguments_that_are_not_utf8_are_discarded_not_replaced(t *testing.T) {
	for _, test := range []struct{ name, text string }{
		{"hermes_lone_surrogate", `<tool_call>{"name": "f", "arguments": {"city": "x\ud800"}}</tool_call>`},
		{"hermes_raw_byte", "<tool_call>{\"name\": \"f\", \"arguments\": {\"city\": \"Par\xffis\"}}</tool_call>"},
		{"pythonic_lone_surrogate", `<|python_tag|>f(city='x\udc00')<|eom_id|>`},
		{"qwen_xml_raw_byte", "<tool_call>\n<function=f>\n<parameter=city>\nPar\xffis\n</parameter>\n</function>\n</tool_call>"},
		{"mistral_lone_surrogate", `[TOOL_CALLS]f[ARGS]{"city": "\udfff"}`},
	} {
		t.Run(test.name, func(t *testing.T) {
			calls, discards := Recover(test.text)
			for _, c := range calls {
				if strings.Contains(string(c.Arguments), "\uFFFD") || strings.Contains(string(c.Arguments), `\ufffd`) {
					t.Fatalf("recovered %s(%s): U+FFFD the model never wrote", c.Name, c.Arguments)
				}
			}
			if len(calls) != 0 || len(discards) == 0 {
				t.Fatalf("calls %v, discards %+v; want the call discarded", summary(calls), discards)
			}
		})
	}
}
