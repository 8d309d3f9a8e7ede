package textcall

import (
	"slices"
	"testing"
)

// fixCase is one text, the calls it must yield and how many Discards.
type fixCase struct {
	name, text string
	want       []nameArgs
	discards   int
}

func checkCases(t *testing.T, cases []fixCase) {
	t.Helper()
	for _, test := range cases {
		t.Run(test.name, func(t *testing.T) {
			calls, discards := Recover(test.text)
			if got := summary(calls); !slices.Equal(got, test.want) || len(discards) != test.discards {
				t.Fatalf("calls %v, discards %+v; want %v and %d discards", got, discards, test.want, test.discards)
			}
			for _, d := range discards {
				if d.Reason == "" {
					t.Fatalf("discard without a reason: %+v", d)
				}
			}
		})
	}
}

// A DeepSeek call whose <｜tool▁call▁end｜> is missing, or a section whose
// <｜tool▁calls▁end｜> is, was cut: complete-looking JSON is no call, since a
// sibling call may be what was lost.
func TestRecover_deepseek_unclosed_call_or_section_is_a_discard(t *testing.T) {
	const (
		secB = "<｜tool▁calls▁begin｜>"
		secE = "<｜tool▁calls▁end｜>"
		b    = "<｜tool▁call▁begin｜>"
		e    = "<｜tool▁call▁end｜>"
		sep  = "<｜tool▁sep｜>"
	)
	v31 := b + "get_time" + sep + `{"tz": "UTC"}`
	v3 := b + "function" + sep + "get_time\n```json\n{\"tz\": \"UTC\"}\n```"
	checkCases(t, []fixCase{
		{"v31_call_end_missing_in_closed_section", secB + v31 + secE, nil, 1},
		{"v3_call_end_missing_in_closed_section", secB + v3 + secE, nil, 1},
		{"v31_section_end_missing", secB + v31 + e, nil, 1},
		{"v3_section_end_missing", secB + v3 + e, nil, 1},
		{"two_calls_section_end_missing", secB + v31 + e + v31 + e, nil, 1},
		{"section_end_missing_before_next_section", secB + v31 + e + secB + v31 + e + secE, []nameArgs{{"get_time", `{"tz":"UTC"}`}}, 1},
		{"first_call_end_missing_second_whole", secB + v31 + v31 + e + secE, []nameArgs{{"get_time", `{"tz":"UTC"}`}}, 1},
		{"bare_call_end_missing", "Sure. " + v31, nil, 1},
		{"bare_call_whole", v31 + e, []nameArgs{{"get_time", `{"tz":"UTC"}`}}, 0},
		{"whole_section", secB + v3 + e + v31 + e + secE, []nameArgs{{"get_time", `{"tz":"UTC"}`}, {"get_time", `{"tz":"UTC"}`}}, 0},
		{"empty_section", secB + secE, nil, 1},
	})
}
