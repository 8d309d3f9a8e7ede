package provider

import (
	"encoding/json"
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/canon"
)

// partialArg is one Vertex AI streamed argument fragment: a value at a JSON
// path. A string value continues the string already at that path.
type partialArg struct {
	JSONPath     string         `json:"jsonPath"`
	StringValue  *wireString    `json:"stringValue"`
	NumberValue  jsontext.Value `json:"numberValue"`
	BoolValue    *bool          `json:"boolValue"`
	NullValue    jsontext.Value `json:"nullValue"`
	WillContinue bool           `json:"willContinue"`
}

// partialArgs assembles partialArg fragments into one object.
type partialArgs struct {
	root  map[string]any
	bytes int
}

func (p *partialArgs) apply(a partialArg) error {
	var v any
	appendStr := false
	switch {
	case a.StringValue != nil:
		v, appendStr = string(*a.StringValue), true
		p.bytes += len(*a.StringValue)
	case len(a.NumberValue) > 0:
		if a.NumberValue.Kind() != '0' {
			return fmt.Errorf("provider: gemini: partialArgs %s numberValue is not a number", a.JSONPath)
		}
		n := json.Number(a.NumberValue)
		v = n
		p.bytes += len(n)
	case a.BoolValue != nil:
		v = *a.BoolValue
		p.bytes += 4
	case len(a.NullValue) > 0:
		v = nil
		p.bytes += 4
	default:
		return nil // a path announced without a value yet
	}
	segs, err := splitJSONPath(a.JSONPath)
	if err != nil {
		return err
	}
	if p.root == nil {
		p.root = map[string]any{}
	}
	if segs[0].isIdx {
		return fmt.Errorf("provider: gemini: partialArgs %s: arguments must be an object", a.JSONPath)
	}
	p.root = setAt(p.root, segs, v, appendStr).(map[string]any)
	return nil
}

// canonical is the object's canonical JSON. A string that is not UTF-8 once
// its fragments are joined is written with its bytes as they are
// (canon.Exact), so the parse gate refuses the call with the offset instead
// of executing U+FFFD the model never wrote.
func (p *partialArgs) canonical() []byte {
	if p.root == nil {
		return []byte("{}")
	}
	b, err := canon.Value(p.root)
	if errors.Is(err, canon.ErrInvalidUTF8) {
		b, err = canon.Exact(p.root)
	}
	if err != nil { // values are strings, json.Numbers, bools and nil only
		return []byte("{}")
	}
	return b
}

// seg is one path step: a key, or an array index when key is "".
type seg struct {
	key   string
	index int
	isIdx bool
}

// splitJSONPath reads "$.a.b[2].c" and "$['a b']" paths.
func splitJSONPath(p string) ([]seg, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, fmt.Errorf("provider: gemini: jsonPath %q does not start with $", p)
	}
	var out []seg
	rest := p[1:]
	for rest != "" {
		switch rest[0] {
		case '.':
			end := strings.IndexAny(rest[1:], ".[")
			if end < 0 {
				end = len(rest) - 1
			}
			if end == 0 {
				return nil, fmt.Errorf("provider: gemini: jsonPath %q has an empty key", p)
			}
			out = append(out, seg{key: rest[1 : 1+end]})
			rest = rest[1+end:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("provider: gemini: jsonPath %q has an unclosed [", p)
			}
			in := rest[1:end]
			if len(in) >= 2 && (in[0] == '\'' || in[0] == '"') && in[len(in)-1] == in[0] {
				out = append(out, seg{key: in[1 : len(in)-1]})
			} else {
				n, err := strconv.Atoi(in)
				if err != nil || n < 0 || n > 1<<16 {
					return nil, fmt.Errorf("provider: gemini: jsonPath %q has a bad index %q", p, in)
				}
				out = append(out, seg{index: n, isIdx: true})
			}
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("provider: gemini: jsonPath %q is not $.key or $[n] steps", p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("provider: gemini: jsonPath %q names the root", p)
	}
	return out, nil
}

// setAt stores v at segs below cur and returns the (possibly new) container.
// A step that contradicts what is there (a key into an array) replaces it:
// the later fragment wins, so applying a checked fragment cannot fail.
func setAt(cur any, segs []seg, v any, appendStr bool) any {
	s := segs[0]
	if s.isIdx {
		arr, _ := cur.([]any)
		for len(arr) <= s.index {
			arr = append(arr, nil)
		}
		arr[s.index] = leaf(arr[s.index], segs[1:], v, appendStr)
		return arr
	}
	m, _ := cur.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	m[s.key] = leaf(m[s.key], segs[1:], v, appendStr)
	return m
}

func leaf(old any, rest []seg, v any, appendStr bool) any {
	if len(rest) > 0 {
		return setAt(old, rest, v, appendStr)
	}
	if s, ok := old.(string); ok && appendStr {
		return s + v.(string)
	}
	return v
}
