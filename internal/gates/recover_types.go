package gates

import (
	"encoding/json"
	"slices"
)

// declaredTypes reads the JSON Schema types of the top-level properties of
// inputSchema, for textcall's TypedArgs: a property's "type" (a name or a
// list), else the types of its anyOf/oneOf alternatives or of its enum or
// const values, plus null where OpenAPI's nullable says so. A property
// with none of these (no schema, {}, a $ref) gets nil: its text is kept.
// A property not listed takes the types of additionalProperties.
// Properties under the root's anyOf/oneOf/allOf count too.
func declaredTypes(inputSchema json.RawMessage) func(param string) []string {
	var root map[string]any
	if json.Unmarshal(inputSchema, &root) != nil {
		return nil
	}
	props := map[string][]string{}
	for _, obj := range append([]map[string]any{root}, alternatives(root, "anyOf", "oneOf", "allOf")...) {
		ps, _ := obj["properties"].(map[string]any)
		for name, p := range ps {
			if _, listed := props[name]; !listed {
				props[name] = nil // listed, whatever types it declares
			}
			if s, ok := p.(map[string]any); ok {
				for _, t := range typesOf(s, 0) {
					if !slices.Contains(props[name], t) {
						props[name] = append(props[name], t)
					}
				}
			}
		}
	}
	// A property the schema does not list takes additionalProperties'
	// types, when that is a schema.
	var rest []string
	if ap, ok := root["additionalProperties"].(map[string]any); ok {
		rest = typesOf(ap, 0)
	}
	return func(param string) []string {
		if ts, ok := props[param]; ok {
			return ts
		}
		return rest
	}
}

func typesOf(s map[string]any, depth int) []string {
	var out []string
	add := func(t string) {
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	switch t := s["type"].(type) {
	case string:
		add(t)
	case []any:
		for _, x := range t {
			if n, ok := x.(string); ok {
				add(n)
			}
		}
	}
	if len(out) == 0 && depth < 8 {
		for _, b := range alternatives(s, "anyOf", "oneOf") {
			for _, t := range typesOf(b, depth+1) {
				add(t)
			}
		}
	}
	if len(out) == 0 {
		values, _ := s["enum"].([]any)
		if c, ok := s["const"]; ok {
			values = append(values, c)
		}
		for _, v := range values {
			add(valueType(v))
		}
	}
	if b, _ := s["nullable"].(bool); b && len(out) > 0 {
		add("null")
	}
	return out
}

func alternatives(s map[string]any, keys ...string) []map[string]any {
	var out []map[string]any
	for _, k := range keys {
		list, _ := s[k].([]any)
		for _, b := range list {
			if m, ok := b.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// valueType is the JSON type of a decoded enum or const value; a whole
// number is integer.
func valueType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if v == float64(int64(v)) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return ""
}
