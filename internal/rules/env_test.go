package rules

import (
	"strings"
	"testing"
)

func TestCompile_errors_name_the_rule_and_say_what_to_do(t *testing.T) {
	for _, test := range []struct {
		name string
		rule Rule
		want []string
	}{
		{"misspelt_args", Rule{Expr: "arg.x > 0", Message: "m"}, []string{"rules: rule 1: undeclared reference to 'arg'", "did you mean 'args'?"}},
		{"unknown_ctx_field", Rule{Expr: "ctx.tenat == 'a'", Message: "m"}, []string{"rule 1: ctx has no field 'tenat'", "did you mean 'ctx.tenant'?"}},
		{"not_bool", Rule{Expr: "args.x + 1", Message: "m"}, []string{"rule 1: expression evaluates to int, not bool"}},
		{"empty_expr", Rule{Expr: " ", Message: "m"}, []string{"rule 1: expression is empty"}},
		{"syntax", Rule{Expr: "args.x >", Message: "m"}, []string{"rule 1: Syntax error", "column 9"}},
		{"no_message", Rule{Expr: "true"}, []string{"rule 1: message is empty"}},
		{"unknown_action", Rule{Expr: "true", Message: "m", Action: "warn"}, []string{`rule 1: action "warn" is unknown`}},
		{"too_long", Rule{Expr: "true" + strings.Repeat(" && true", MaxExprLen/8), Message: "m"}, []string{"rule 1: "}},
	} {
		t.Run(test.name, func(t *testing.T) {
			_, err := Compile([]Rule{{Expr: "true", Message: "fine"}, test.rule})
			if err == nil {
				t.Fatal("compiled, want error")
			}
			for _, w := range test.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Count(err.Error(), "did you mean") > 1 {
				t.Errorf("error %q repeats its suggestion", err)
			}
		})
	}
}

func TestSum_adds_ints_doubles_and_empty_lists(t *testing.T) {
	set := mustCompile(t, []Rule{
		{Expr: `[1, 2, 3].sum() == 6`, Message: "ints"},
		{Expr: `[].sum() == 0`, Message: "empty"},
		{Expr: `[1, 2.5].sum() == 3.5`, Message: "mixed"},
		{Expr: `args.xs.sum() == 10`, Message: "dyn"},
		{Expr: `args.ys.map(y, y.n).sum() == 3`, Message: "mapped"},
	})
	got := set.Eval(decodeArgs(t, `{"xs":[4,6],"ys":[{"n":1},{"n":2}]}`), Context{})
	if got != nil {
		t.Errorf("got %+v, want none", got)
	}
	bad := mustCompile(t, []Rule{{Expr: `args.xs.sum() > 0`, Message: "sum"}})
	if got := bad.Eval(decodeArgs(t, `{"xs":[1,"two"]}`), Context{}); len(got) != 1 || !strings.Contains(got[0].Message, "sum() needs a list of numbers") {
		t.Errorf("sum of a string: got %+v", got)
	}
}
