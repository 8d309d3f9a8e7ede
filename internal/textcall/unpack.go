package textcall

import (
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/parse"
)

// nameKeys are the spellings of a call's tool name models use, in priority
// order.
func nameKeys() []string { return []string{"name", "tool", "tool_name", "function"} }

// argKeys are the spellings of a call's arguments models use, in priority
// order.
func argKeys() []string { return []string{"arguments", "args", "parameters", "input", "params"} }

// unpack maps the many spellings of a call onto one: the name from name,
// tool, tool_name, function (a string) or function.name; the arguments from
// arguments, args, parameters, input or params, at the top level or inside a
// function object, or an object of one key, the name, whose value is the
// arguments object. Arguments given as a JSON string are decoded once (they
// must then hold an object); absent or null arguments are {}. reason is
// non-empty, and says why, when v is not an object, has no non-empty name,
// or its arguments are not an object.
func unpack(v any) (name string, args map[string]any, reason string) {
	m, isObj := v.(map[string]any)
	if !isObj {
		return "", nil, "not a JSON object"
	}
	fn, _ := m["function"].(map[string]any)
	name = stringAt(m, nameKeys())
	if name == "" && fn != nil {
		name = stringAt(fn, nameKeys()[:1])
	}
	if strings.TrimSpace(name) == "" {
		if n, a, why, ok := nameToArgs(m); ok {
			return n, a, why
		}
		return "", nil, "no tool name (expected one of name, tool, tool_name, function, function.name, or {\"NAME\": {arguments}})"
	}
	raw, found := firstPresent(m, argKeys())
	if !found && fn != nil {
		raw, found = firstPresent(fn, argKeys())
	}
	if !found || raw == nil {
		return name, map[string]any{}, ""
	}
	switch a := raw.(type) {
	case map[string]any:
		return name, a, ""
	case string:
		lim := parse.DefaultLimits()
		lim.EmptyIsObject = true
		_, obj, err := parse.Strict([]byte(a), lim)
		if err != nil {
			return name, nil, "arguments string is not a JSON object: " + reasonOf(err)
		}
		return name, obj, ""
	}
	return name, nil, "arguments are not a JSON object"
}

// nameToArgs reads the {"NAME": {arguments}} shape (Apertus): one key that
// is no spelling of a name or arguments, whose value is an object, or a
// string that holds one JSON object ({"NAME": "{\"a\": 1}"}, the arguments
// as the OpenAI API carries them). ok reports the shape; reason is
// non-empty when the string is not a JSON object.
func nameToArgs(m map[string]any) (name string, args map[string]any, reason string, ok bool) {
	if len(m) != 1 {
		return "", nil, "", false
	}
	for k, v := range m {
		if strings.TrimSpace(k) == "" || slices.Contains(nameKeys(), k) || slices.Contains(argKeys(), k) {
			return "", nil, "", false
		}
		switch a := v.(type) {
		case map[string]any:
			return k, a, "", true
		case string:
			if s := strings.TrimSpace(a); !strings.HasPrefix(s, "{") || !strings.HasSuffix(s, "}") {
				return "", nil, "", false // {"city": "Paris"}: no call
			}
			_, obj, err := parse.Strict([]byte(a), parse.DefaultLimits())
			if err != nil {
				return k, nil, "the arguments string of " + k + " is not a JSON object: " + reasonOf(err), true
			}
			return k, obj, "", true
		}
	}
	return "", nil, "", false
}

func stringAt(m map[string]any, keys []string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func firstPresent(m map[string]any, keys []string) (any, bool) {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v, true
		}
	}
	return nil, false
}

// callShaped reports whether an object floating in prose is meant as a call:
// it names a tool and carries arguments under one of the argument keys (or a
// function object). A bare {"name": "Paris"} in prose is not a call.
func callShaped(m map[string]any) bool {
	if fn, ok := m["function"].(map[string]any); ok {
		_, hasArgs := firstPresent(fn, argKeys())
		_, hasTopArgs := firstPresent(m, argKeys())
		return hasArgs || hasTopArgs
	}
	if stringAt(m, nameKeys()) == "" {
		return false
	}
	_, hasArgs := firstPresent(m, argKeys())
	return hasArgs
}
