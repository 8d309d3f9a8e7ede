// Package rules runs a tool's business rules, CEL expressions over the call's arguments
// and context, and the built-in placeholder detector. It is the pure core of the
// business gate; internal/policy builds its allow expressions on the same CEL environment.
package rules

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/ext"

	"github.com/toolgate/toolgate/internal/textdist"
)

// Limits that keep one expression from hanging or exhausting a worker.
const (
	// MaxExprLen is the longest expression accepted, in code points.
	MaxExprLen = 4096
	// CostLimit bounds the work of one evaluation (the unit Kubernetes validation rules
	// use; roughly one per operation and per element a comprehension visits).
	CostLimit = 1_000_000
	// MemoryLimit bounds the elements one evaluation may materialize.
	MemoryLimit = 1_000_000
	// maxRangeSize bounds lists.range(n).
	maxRangeSize = 10_000
)

// NewEnv returns the CEL environment toolgate expressions are written in: standard CEL,
// the cel-go string, list, math and set extensions, cel.bind, two-variable
// comprehensions (list.all(index, item, ...)), and list.sum(), with the
// given variable declarations and the parse limits above.
//
// CEL has no fold, so a total is written with map() and sum():
//
//	args.line_items.map(i, i.quantity * i.price_cents).sum() > 0
func NewEnv(vars ...cel.EnvOption) (*cel.Env, error) {
	opts := []cel.EnvOption{
		ext.Strings(),
		ext.Lists(ext.ListsMaxRangeSize(maxRangeSize)),
		ext.Math(),
		ext.Sets(),
		ext.Bindings(),
		ext.TwoVarComprehensions(),
		sumFunction(),
		cel.ParserExpressionSizeLimit(MaxExprLen),
		cel.ParserRecursionLimit(64),
		cel.ExpressionNodeLimit(2000),
	}
	env, err := cel.NewEnv(append(opts, vars...)...)
	if err != nil {
		return nil, fmt.Errorf("rules: cel environment: %w", err)
	}
	return env, nil
}

// CompileExpr compiles expr in env to a program that must return bool (or dyn, checked
// when it runs), evaluated under CostLimit and MemoryLimit. Its error lists every
// problem in one line each, with a suggestion for a misspelt variable, and carries no
// prefix: the caller says which rule or policy it was.
func CompileExpr(env *cel.Env, expr string) (*cel.Ast, cel.Program, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, nil, fmt.Errorf("expression is empty: write a condition that is true when the call is fine, such as args.line_items.size() > 0")
	}
	ast, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, nil, fmt.Errorf("%s", describeIssues(env, iss.Errors()))
	}
	if t := ast.OutputType(); !t.IsExactType(types.BoolType) && !t.IsExactType(types.DynType) {
		return nil, nil, fmt.Errorf("expression evaluates to %s, not bool: write a condition that is true or false", t)
	}
	prg, err := env.Program(ast, cel.CostLimit(CostLimit), cel.MemoryLimit(MemoryLimit))
	if err != nil {
		return nil, nil, fmt.Errorf("expression does not compile: %w", err)
	}
	return ast, prg, nil
}

func describeIssues(env *cel.Env, errs []*common.Error) string {
	var names []string
	for _, v := range env.Variables() {
		names = append(names, v.Name())
	}
	parts := make([]string, 0, len(errs))
	for _, e := range errs {
		msg := strings.Replace(e.Message, " (in container '')", "", 1)
		// cel-go suggests a close name itself in some cases; add ours only when it did not.
		if name, ok := strings.CutPrefix(msg, "undeclared reference to '"); ok && !strings.Contains(msg, "did you mean") {
			name, _, _ = strings.Cut(name, "'")
			if s := suggest(name, names); s != "" {
				msg += fmt.Sprintf(" (did you mean '%s'?)", s)
			} else {
				msg += fmt.Sprintf(" (variables are %s)", strings.Join(names, ", "))
			}
		}
		if e.Location != nil && e.Location.Line() > 0 {
			msg += fmt.Sprintf(" at column %d", e.Location.Column()+1)
		}
		parts = append(parts, msg)
	}
	return strings.Join(parts, "; ")
}

// suggest returns the candidate within edit distance 2 of name, if exactly one is
// closest.
func suggest(name string, candidates []string) string {
	sort.Strings(candidates)
	best, bestD := "", 3
	for _, c := range candidates {
		if d := textdist.Distance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// sumFunction declares list.sum(): the sum of a list of numbers, int when every element
// is an int, double when any is a double, 0 for an empty list, an error on overflow or
// on an element that is not a number.
func sumFunction() cel.EnvOption {
	return cel.Function("sum",
		cel.MemberOverload("list_sum", []*cel.Type{cel.ListType(cel.DynType)}, cel.DynType,
			cel.UnaryBinding(sumList)))
}

func sumList(v ref.Val) ref.Val {
	l, ok := v.(traits.Lister)
	if !ok {
		return types.NewErr("sum() needs a list of numbers, got %s", v.Type())
	}
	var isum int64
	var fsum float64
	isDouble := false
	for it := l.Iterator(); it.HasNext() == types.True; {
		switch e := it.Next().(type) {
		case types.Int:
			if !isDouble {
				s := isum + int64(e)
				if (int64(e) > 0 && s < isum) || (int64(e) < 0 && s > isum) {
					return types.NewErr("sum() overflows int64")
				}
				isum = s
			} else {
				fsum += float64(e)
			}
		case types.Double:
			if !isDouble {
				isDouble, fsum = true, float64(isum)
			}
			fsum += float64(e)
		case types.Uint:
			if e > math.MaxInt64 {
				return types.NewErr("sum() overflows int64")
			}
			if isDouble {
				fsum += float64(e)
				continue
			}
			s := isum + int64(e)
			if s < isum {
				return types.NewErr("sum() overflows int64")
			}
			isum = s
		default:
			return types.NewErr("sum() needs a list of numbers, found %s", e.Type())
		}
	}
	if isDouble {
		return types.Double(fsum)
	}
	return types.Int(isum)
}
