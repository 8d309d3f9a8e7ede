package repair

import (
	"strings"
	"testing"
)

func TestAnswer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		calls    []Call
		text     string
		wantKind string
		want     Verdict
	}{
		{name: "one call is repaired",
			calls:    []Call{{Name: "create_invoice", Arguments: `{"amount":5}`}},
			wantKind: KindRepaired, want: Verdict{Tool: "create_invoice", Arguments: `{"amount":5}`}},
		{name: "one call with a changed name is repaired under that name",
			calls:    []Call{{Name: "send_email", Arguments: `{}`}},
			wantKind: KindRepaired, want: Verdict{Tool: "send_email", Arguments: `{}`}},
		{name: "call with text keeps the text",
			calls: []Call{{Name: "t", Arguments: `{}`}}, text: " fixed ",
			wantKind: KindRepaired, want: Verdict{Tool: "t", Arguments: `{}`, Text: "fixed"}},
		{name: "two calls fail",
			calls:    []Call{{Name: "t", Arguments: `{}`}, {Name: "t", Arguments: `{"a":1}`}},
			wantKind: KindFailed, want: Verdict{Why: "2 tool calls"}},
		{name: "text that information is missing asks for clarification",
			text:     "The customer_id is missing; I cannot create the invoice without it.",
			wantKind: KindNeedsClarification, want: Verdict{Text: "The customer_id is missing; I cannot create the invoice without it."}},
		{name: "curly apostrophe",
			text:     "I don’t know which account to refund.",
			wantKind: KindNeedsClarification, want: Verdict{Text: "I don’t know which account to refund."}},
		{name: "other text fails",
			text:     "Sure! Here you go.",
			wantKind: KindFailed, want: Verdict{Text: "Sure! Here you go.", Why: "did not say what is missing"}},
		{name: "nothing fails",
			wantKind: KindFailed, want: Verdict{Why: "neither a tool call nor text"}},
		{name: "blank text fails",
			text:     " \n ",
			wantKind: KindFailed, want: Verdict{Why: "neither a tool call nor text"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Answer(tc.calls, tc.text)
			if got.Kind != tc.wantKind || got.Tool != tc.want.Tool || got.Arguments != tc.want.Arguments ||
				got.Text != tc.want.Text || !strings.Contains(got.Why, tc.want.Why) {
				t.Fatalf("Answer = %+v; want kind %s and %+v", got, tc.wantKind, tc.want)
			}
			if (got.Kind == KindFailed) != (got.Why != "") {
				t.Errorf("Why must be set exactly for failed verdicts: %+v", got)
			}
		})
	}
}
