package textcall

import (
	"encoding/json"
	"math/big"
	"slices"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/internal/canon"
	"github.com/toolgate/toolgate/internal/parse"
)

// Conversion records how TypeArgs read one parameter's text.
type Conversion struct {
	Param string
	// As is the JSON type the value became: string, integer, number,
	// boolean, null, object or array.
	As string
	// Declared is the property's declared types; nil when the schema
	// declares none, and As is then the guess from the text.
	Declared []string
	// Kept is true when the text could not be read as any declared type
	// and stays a string, for the schema to report.
	Kept bool
	// Schema is true when a schema was given but declares no type for
	// the parameter: its text is kept (or, for a dialect whose grammar
	// types its values, the grammar's value), never guessed.
	Schema bool
}

// String is the conversion as a history note: "zip: kept as string
// (schema type string)".
func (c Conversion) String() string {
	switch {
	case c.Kept:
		return c.Param + ": kept as string: the text does not read as " + strings.Join(c.Declared, " or ") + " (schema type " + strings.Join(c.Declared, "|") + "); the schema judges it"
	case c.Declared == nil && c.Schema && c.As == "string":
		return c.Param + ": kept as string (no declared type)"
	case c.Declared == nil && c.Schema:
		return c.Param + ": read as " + c.As + " (no declared type; as the dialect's grammar writes it)"
	case c.Declared == nil:
		return c.Param + ": read as " + c.As + " (no declared type; guessed from the text)"
	case c.As == "string":
		return c.Param + ": kept as string (schema type " + strings.Join(c.Declared, "|") + ")"
	}
	return c.Param + ": read as " + c.As + " (schema type " + strings.Join(c.Declared, "|") + ")"
}

// TypeArgs builds the canonical JSON arguments object of a call whose
// values are untyped text (Call.Params), converting each by its declared
// JSON Schema types (types(param); nil when undeclared):
//   - string stays string, even "94107", "true" or "null";
//   - integer, number, boolean, null, object and array are parsed only when
//     declared; of a union the first type the text reads as wins, in the
//     order null, boolean, integer, number, object, array, string;
//   - text that reads as no declared type stays a string, so the schema
//     reports it ("must be integer, got string");
//   - a parameter the schema gives no type keeps its text, as the engines
//     do (<arg_value>1</arg_value> stays "1");
//   - without a schema (types nil) every value gets the guess of
//     typedValue.
//
// Every conversion that differs from taking the text as a string, or from
// the guess, is returned (sorted by parameter) for the call's history.
func TypeArgs(params map[string]string, types func(param string) []string) (json.RawMessage, []Conversion, error) {
	return typeArgs(params, types, nil)
}

// TypedArgs is TypeArgs of c's Params, except that a parameter the schema
// gives no type keeps the value c's dialect wrote when its grammar types
// values (Gemma's bare 3 is a number, its <|"|>3<|"|> a string).
func (c Call) TypedArgs(types func(param string) []string) (json.RawMessage, []Conversion, error) {
	var grammar map[string]any
	if c.grammarTyped {
		_, grammar, _ = parse.Strict(c.Arguments, parse.DefaultLimits())
	}
	return typeArgs(c.Params, types, grammar)
}

func typeArgs(params map[string]string, types func(param string) []string, grammar map[string]any) (json.RawMessage, []Conversion, error) {
	args := make(map[string]any, len(params))
	var convs []Conversion
	for k, raw := range params {
		var declared []string
		if types != nil {
			declared = types(k)
		}
		v, c, note := typeOne(raw, declared)
		if types != nil && len(declared) == 0 {
			v, c, note = raw, Conversion{As: "string", Schema: true}, false
			if _, guessedString := typedValue(raw).(string); !guessedString {
				note = true // the guess would have been another type
			}
			if g, ok := grammar[k]; ok {
				v, c = g, Conversion{As: jsonType(g), Schema: true}
				_, note = g.(string)
				note = !note
			}
		}
		args[k] = v
		if note {
			c.Param = k
			convs = append(convs, c)
		}
	}
	sort.Slice(convs, func(i, j int) bool { return convs[i].Param < convs[j].Param })
	out, err := canon.Value(args)
	if err != nil {
		return nil, convs, err
	}
	return out, convs, nil
}

// typeOne converts one parameter text; note says whether the conversion is
// worth recording (anything but plain text declared, or guessed, a string).
func typeOne(raw string, declared []string) (any, Conversion, bool) {
	if len(declared) == 0 {
		v := typedValue(raw)
		if _, isString := v.(string); isString {
			return v, Conversion{}, false
		}
		return v, Conversion{As: jsonType(v)}, true
	}
	s := strings.TrimSpace(raw)
	for _, t := range []string{"null", "boolean", "integer", "number", "object", "array"} {
		if !slices.Contains(declared, t) {
			continue
		}
		if v, ok := readAs(t, s); ok {
			return v, Conversion{As: t, Declared: declared}, true
		}
	}
	if slices.Contains(declared, "string") {
		// Worth a note only when the guess would have been another type.
		_, guessedString := typedValue(raw).(string)
		return raw, Conversion{As: "string", Declared: declared}, !guessedString
	}
	return raw, Conversion{As: "string", Declared: declared, Kept: true}, true
}

// readAs reads s as JSON type t.
func readAs(t, s string) (any, bool) {
	switch t {
	case "null":
		return nil, s == "null"
	case "boolean":
		switch strings.ToLower(s) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
		return nil, false
	}
	if s == "" {
		return nil, false
	}
	v, n, err := parse.Value([]byte(s), parse.DefaultLimits())
	if err != nil || n != len(s) {
		return nil, false
	}
	switch t {
	case "integer":
		num, ok := v.(json.Number)
		if !ok {
			return nil, false
		}
		f, _, ferr := big.ParseFloat(string(num), 10, 256, big.ToNearestEven)
		return num, ferr == nil && f.IsInt()
	case "number":
		_, ok := v.(json.Number)
		return v, ok
	case "object":
		_, ok := v.(map[string]any)
		return v, ok
	case "array":
		_, ok := v.([]any)
		return v, ok
	}
	return nil, false
}

func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if f, _, err := big.ParseFloat(string(v), 10, 256, big.ToNearestEven); err == nil && f.IsInt() {
			return "integer"
		}
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "string"
}
