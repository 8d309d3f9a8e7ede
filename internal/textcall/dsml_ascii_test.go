package textcall

import (
	"testing"
)

// DSML written with ASCII bars is read like the fullwidth spelling; a block
// is closed only in the spelling that opened it.
func TestRecover_dsml_ascii_bars(t *testing.T) {
	const inv = "<|DSML|invoke name=\"f\">\n<|DSML|parameter name=\"a\" string=\"true\">x</|DSML|parameter>\n</|DSML|invoke>\n"
	checkCases(t, []fixCase{
		{"block", "<|DSML|function_calls>\n" + inv + "</|DSML|function_calls>", []nameArgs{{"f", `{"a":"x"}`}}, 0},
		{"bare_invoke", "Now: " + inv, []nameArgs{{"f", `{"a":"x"}`}}, 0},
		{"json_invoke", "<|DSML|function_calls><|DSML|invoke name=\"f\">{\"a\": 1}</|DSML|invoke></|DSML|function_calls>", []nameArgs{{"f", `{"a":1}`}}, 0},
		{"cut_block", "<|DSML|function_calls>\n" + inv, nil, 1},
		{"closed_in_the_other_spelling", "<|DSML|function_calls>\n" + inv + "</｜DSML｜function_calls>", nil, 1},
		{"word_in_prose", "DSML, |DSML| and <|DSML|> are DeepSeek's markup.", nil, 0},
	})
}
