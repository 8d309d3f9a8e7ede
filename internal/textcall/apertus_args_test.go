package textcall

import (
	"strings"
	"testing"
)

// Apertus arguments given as a JSON string holding an object are that
// object; a string that is not one is a Discard.
func TestRecover_apertus_string_arguments_are_decoded(t *testing.T) {
	checkCases(t, []fixCase{
		{"string_object", `<|tools_prefix|>[{"f": "{\"a\": 1}"}]<|tools_suffix|>`, []nameArgs{{"f", `{"a":1}`}}, 0},
		{"string_empty_object", `<|tools_prefix|>[{"f": " {} "}]<|tools_suffix|>`, []nameArgs{{"f", `{}`}}, 0},
		{"string_not_json", `<|tools_prefix|>[{"f": "{a: 1}"}]<|tools_suffix|>`, nil, 1},
		{"string_truncated_json", `<|tools_prefix|>[{"f": "{\"a\": }"}]<|tools_suffix|>`, nil, 1},
		{"plain_string_is_no_call", `<|tools_prefix|>[{"location": "Zurich"}]<|tools_suffix|>`, nil, 1},
	})
	_, discards := Recover(`<|tools_prefix|>[{"f": "{a: 1}"}]<|tools_suffix|>`)
	if len(discards) != 1 || !strings.Contains(discards[0].Reason, "arguments string of f") {
		t.Fatalf("discards %+v, want one about f's arguments string", discards)
	}
}
