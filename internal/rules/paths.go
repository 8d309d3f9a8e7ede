package rules

import (
	"slices"
	"strconv"
	"strings"

	"cel.dev/cel-go/common/ast"
)

// any element of a list, in a field path
const wildcard = "*"

// fieldPaths lists the argument fields an expression reads: each select chain rooted at
// the variable root, such as args.customer.email -> [customer email], and through a
// comprehension over such a chain, args.line_items.all(i, i.quantity > 0) ->
// [line_items * quantity]. has() tests are left out: they do not need the field.
func fieldPaths(e ast.Expr, root string) [][]string {
	var out [][]string
	walkPaths(e, map[string][]string{root: {}}, &out)
	return out
}

func walkPaths(e ast.Expr, bound map[string][]string, out *[][]string) {
	switch e.Kind() {
	case ast.SelectKind:
		s := e.AsSelect()
		if !s.IsTestOnly() {
			if p, ok := chain(e, bound); ok {
				*out = append(*out, p)
			}
		}
		walkPaths(s.Operand(), bound, out)
	case ast.CallKind:
		c := e.AsCall()
		if c.IsMemberFunction() {
			walkPaths(c.Target(), bound, out)
		}
		for _, a := range c.Args() {
			walkPaths(a, bound, out)
		}
	case ast.ListKind:
		for _, el := range e.AsList().Elements() {
			walkPaths(el, bound, out)
		}
	case ast.MapKind:
		for _, en := range e.AsMap().Entries() {
			walkPaths(en.AsMapEntry().Key(), bound, out)
			walkPaths(en.AsMapEntry().Value(), bound, out)
		}
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		walkPaths(c.IterRange(), bound, out)
		inner := make(map[string][]string, len(bound)+1)
		for k, v := range bound {
			inner[k] = v
		}
		elem := c.IterVar()
		if c.IterVar2() != "" {
			elem = c.IterVar2()
			delete(inner, c.IterVar())
		}
		delete(inner, elem)
		delete(inner, c.AccuVar())
		if p, ok := chain(c.IterRange(), bound); ok {
			inner[elem] = append(slices.Clip(p), wildcard)
		}
		for _, x := range []ast.Expr{c.AccuInit(), c.LoopCondition(), c.LoopStep(), c.Result()} {
			walkPaths(x, inner, out)
		}
	}
}

// chain resolves e to a field path if it is a bound variable followed by field selects.
func chain(e ast.Expr, bound map[string][]string) ([]string, bool) {
	switch e.Kind() {
	case ast.IdentKind:
		p, ok := bound[e.AsIdent()]
		return p, ok
	case ast.SelectKind:
		s := e.AsSelect()
		if s.IsTestOnly() {
			return nil, false
		}
		p, ok := chain(s.Operand(), bound)
		if !ok {
			return nil, false
		}
		return append(slices.Clip(p), s.FieldName()), true
	}
	return nil, false
}

// missingFields returns, sorted, the dotted paths (list elements by index) of fields the
// paths read that args does not have. A value of the wrong kind along a path (a string
// where an object is expected) is not reported: that is not a missing field.
func missingFields(args map[string]any, paths [][]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		findMissing(args, p, nil, seen, &out)
	}
	slices.Sort(out)
	return out
}

func findMissing(v any, rest, at []string, seen map[string]bool, out *[]string) {
	if len(rest) == 0 {
		return
	}
	if rest[0] == wildcard {
		list, ok := v.([]any)
		if !ok {
			return
		}
		for i, el := range list {
			findMissing(el, rest[1:], append(slices.Clip(at), strconv.Itoa(i)), seen, out)
		}
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	next, ok := m[rest[0]]
	here := append(slices.Clip(at), rest[0])
	if !ok {
		if key := strings.Join(here, "."); !seen[key] {
			seen[key] = true
			*out = append(*out, key)
		}
		return
	}
	findMissing(next, rest[1:], here, seen, out)
}
