package tool

import (
	"encoding/json"
	"sort"
)

// NullableFields lists the argument fields of an input schema where null is
// a meaningful value, as the placeholder detector reads them (dotted paths,
// "*" for any array element): every property whose type includes "null"
// ({"type": ["string", "null"]}), whose enum or const admits null, which is
// {"type": "null"}, or one of whose anyOf/oneOf branches is such a schema
// (the form OpenAI strict mode and Pydantic produce). Properties of nested
// objects and array items are followed; $ref is not. An unreadable schema
// gives nil: the detector then flags every null.
func NullableFields(inputSchema json.RawMessage) []string {
	var root map[string]any
	if err := json.Unmarshal(inputSchema, &root); err != nil {
		return nil
	}
	var out []string
	walkNullable(root, "", &out, 0)
	sort.Strings(out)
	return out
}

const maxSchemaDepth = 32

func walkNullable(s map[string]any, prefix string, out *[]string, depth int) {
	if depth > maxSchemaDepth {
		return
	}
	for _, obj := range branches(s) {
		if props, ok := obj["properties"].(map[string]any); ok {
			for name, p := range props {
				ps, ok := p.(map[string]any)
				if !ok {
					continue
				}
				path := name
				if prefix != "" {
					path = prefix + "." + name
				}
				if admitsNull(ps) {
					*out = append(*out, path)
				}
				walkNullable(ps, path, out, depth+1)
			}
		}
		if items, ok := obj["items"].(map[string]any); ok {
			path := "*"
			if prefix != "" {
				path = prefix + ".*"
			}
			if admitsNull(items) {
				*out = append(*out, path)
			}
			walkNullable(items, path, out, depth+1)
		}
	}
}

// branches is s itself and its anyOf/oneOf/allOf alternatives, where the
// properties of a nullable object may sit.
func branches(s map[string]any) []map[string]any {
	out := []map[string]any{s}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		list, _ := s[k].([]any)
		for _, b := range list {
			if m, ok := b.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

func admitsNull(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		if t == "null" {
			return true
		}
	case []any:
		for _, x := range t {
			if x == "null" {
				return true
			}
		}
	}
	if v, ok := s["const"]; ok && v == nil {
		return true
	}
	if enum, ok := s["enum"].([]any); ok {
		for _, x := range enum {
			if x == nil {
				return true
			}
		}
	}
	if b, _ := s["nullable"].(bool); b { // OpenAPI 3.0
		return true
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		list, _ := s[k].([]any)
		for _, b := range list {
			if m, ok := b.(map[string]any); ok && admitsNull(m) {
				return true
			}
		}
	}
	return false
}
