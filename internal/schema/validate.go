package schema

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Validate checks doc, a decoded JSON value (map[string]any, []any, string, bool, nil,
// and numbers as json.Number or float64, as encoding/json decodes with or without
// UseNumber), and returns every problem: all leaves of the library's error tree, one per
// missing or unexpected property, sorted by path, keyword and message. A valid document
// returns nil.
func (s *Schema) Validate(doc any) []Problem {
	err := s.sch.Validate(doc)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return []Problem{{Message: err.Error()}}
	}
	var out []Problem
	collect(verr, &out)
	slices.SortFunc(out, func(a, b Problem) int {
		switch {
		case lessProblem(a, b):
			return -1
		case lessProblem(b, a):
			return 1
		}
		return 0
	})
	return slices.Compact(out)
}

// collect appends the leaves below e. Inner nodes (allOf, $ref, the root) only group
// their causes; a node without causes is a failure of its own.
func collect(e *jsonschema.ValidationError, out *[]Problem) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collect(c, out)
		}
		return
	}
	at := e.InstanceLocation
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		for _, p := range k.Missing {
			*out = append(*out, Problem{Path: pointer(append(slices.Clip(at), p)), Keyword: "required", Message: "is required but missing"})
		}
		return
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, Problem{Path: pointer(append(slices.Clip(at), p)), Keyword: "additionalProperties", Message: "is not an allowed property: remove it"})
		}
		return
	case *kind.Dependency:
		for _, p := range k.Missing {
			*out = append(*out, Problem{Path: pointer(append(slices.Clip(at), p)), Keyword: "dependencies", Message: fmt.Sprintf("is required when %q is present", k.Prop)})
		}
		return
	case *kind.DependentRequired:
		for _, p := range k.Missing {
			*out = append(*out, Problem{Path: pointer(append(slices.Clip(at), p)), Keyword: "dependentRequired", Message: fmt.Sprintf("is required when %q is present", k.Prop)})
		}
		return
	}
	kw, msg := describe(e.ErrorKind)
	*out = append(*out, Problem{Path: pointer(at), Keyword: kw, Message: msg})
}

// describe names the failed keyword and phrases the failure for a model to act on;
// kinds without a phrasing of ours keep the library's English message.
func describe(k jsonschema.ErrorKind) (keyword, msg string) {
	if kp := k.KeywordPath(); len(kp) > 0 {
		keyword = kp[0]
	}
	switch k := k.(type) {
	case *kind.Type:
		return keyword, fmt.Sprintf("must be %s, got %s", strings.Join(k.Want, " or "), k.Got)
	case *kind.Enum:
		return keyword, "must be one of " + joinValues(k.Want) + ", got " + display(k.Got)
	case *kind.Const:
		return keyword, "must be " + display(k.Want) + ", got " + display(k.Got)
	case *kind.Format:
		return keyword, fmt.Sprintf("must be a valid %s, got %s", k.Want, display(k.Got))
	case *kind.MinLength:
		return keyword, fmt.Sprintf("must be at least %d characters long, got %d", k.Want, k.Got)
	case *kind.MaxLength:
		return keyword, fmt.Sprintf("must be at most %d characters long, got %d", k.Want, k.Got)
	case *kind.MinItems:
		return keyword, fmt.Sprintf("must have at least %d items, got %d", k.Want, k.Got)
	case *kind.MaxItems:
		return keyword, fmt.Sprintf("must have at most %d items, got %d", k.Want, k.Got)
	case *kind.MinProperties:
		return keyword, fmt.Sprintf("must have at least %d properties, got %d", k.Want, k.Got)
	case *kind.MaxProperties:
		return keyword, fmt.Sprintf("must have at most %d properties, got %d", k.Want, k.Got)
	case *kind.Minimum:
		return keyword, "must be >= " + rat(k.Want) + ", got " + rat(k.Got)
	case *kind.Maximum:
		return keyword, "must be <= " + rat(k.Want) + ", got " + rat(k.Got)
	case *kind.ExclusiveMinimum:
		return keyword, "must be > " + rat(k.Want) + ", got " + rat(k.Got)
	case *kind.ExclusiveMaximum:
		return keyword, "must be < " + rat(k.Want) + ", got " + rat(k.Got)
	case *kind.MultipleOf:
		return keyword, "must be a multiple of " + rat(k.Want) + ", got " + rat(k.Got)
	case *kind.Pattern:
		return keyword, fmt.Sprintf("must match pattern %q, got %q", k.Want, k.Got)
	case *kind.FalseSchema:
		return "false", "is not allowed here"
	case *kind.Not:
		return "not", "must not match the schema under 'not'"
	}
	return keyword, k.LocalizedString(message.NewPrinter(language.English))
}

func rat(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return fmt.Sprint(f)
}

func display(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprint(v)
}

func joinValues(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = display(v)
	}
	return strings.Join(parts, ", ")
}
