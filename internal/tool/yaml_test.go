package tool

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// schemaOf loads src and returns the one tool's input schema, decoded.
func schemaOf(t *testing.T, src string) map[string]any {
	t.Helper()
	cs, err := loadAndCompile("tools.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(cs[0].Def.InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoad_yaml_1_1_booleans_stay_strings(t *testing.T) {
	// YAML 1.1 (sigs.k8s.io/yaml) read on, no, y and off as booleans: the
	// property names became "true" and "false" and required [true, false].
	s := schemaOf(t, `
tools:
  - name: set_switch
    input_schema:
      type: object
      properties:
        on: {type: boolean}
        no: {type: string, enum: [yes, no, y, n, on, off]}
        off: {type: string, default: off}
      required: [on, no]
    policy: {risk: write, approval: false}
`)
	var props []string
	for k := range s["properties"].(map[string]any) {
		props = append(props, k)
	}
	slices.Sort(props)
	if got := strings.Join(props, ","); got != "no,off,on" {
		t.Fatalf("properties %q, want no,off,on", got)
	}
	if req := s["required"]; !reflect.DeepEqual(req, []any{"on", "no"}) {
		t.Fatalf("required %#v, want the strings on, no", req)
	}
	no := s["properties"].(map[string]any)["no"].(map[string]any)
	if enum := no["enum"]; !reflect.DeepEqual(enum, []any{"yes", "no", "y", "n", "on", "off"}) {
		t.Fatalf("enum %#v, want strings", enum)
	}
	if d := s["properties"].(map[string]any)["off"].(map[string]any)["default"]; d != "off" {
		t.Fatalf("default %#v, want the string off", d)
	}
}

func TestLoad_yaml_booleans_numbers_aliases_and_merges(t *testing.T) {
	s := schemaOf(t, `
base: &base {type: integer, minimum: 0x10, maximum: 1_000, multipleOf: 1.0}
tools:
  - name: count
    input_schema:
      type: object
      additionalProperties: false
      properties:
        n: {<<: *base, maximum: 99}
        m: *base
        true: {type: string}
        1: {type: string}
        ~: {type: string}
    policy: {risk: read, dry_run: true}
`)
	if s["additionalProperties"] != false {
		t.Fatalf("additionalProperties %#v, want the boolean false", s["additionalProperties"])
	}
	props := s["properties"].(map[string]any)
	n := props["n"].(map[string]any)
	if n["minimum"] != 16.0 || n["maximum"] != 99.0 || n["type"] != "integer" {
		t.Fatalf("merged n = %v, want minimum 16 from the anchor and its own maximum 99", n)
	}
	if m := props["m"].(map[string]any); m["maximum"] != 1000.0 {
		t.Fatalf("alias m = %v", m)
	}
	for _, k := range []string{"true", "1", "~"} {
		if _, ok := props[k]; !ok {
			t.Errorf("property %q missing: a key is the text written", k)
		}
	}
}

func TestLoad_yaml_refused_with_the_line(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'i'; i++ {
		bomb += string(i) + ": &" + string(i) + " [" + strings.Repeat("*"+string(i-1)+", ", 9) + "*" + string(i-1) + "]\n"
	}
	bomb += "tools: [*i]\n"
	for _, c := range []struct{ name, src, want string }{
		{"duplicate_key", "tools:\n  - name: a\n    name: b\n    input_schema: {type: object}\n", `line 3: key "name" is given twice`},
		{"two_documents", "tools: []\n---\ntools: []\n", "line 2: a second YAML document"},
		{"custom_tag", "tools:\n  - name: !secret a\n    input_schema: {}\n", "line 2: tag !secret is not supported"},
		{"infinity", "tools:\n  - name: a\n    input_schema: {maximum: .inf}\n", "line 3: .inf is not a number"},
		{"alias_bomb", bomb, "aliases expand to more than"},
		{"mapping_key", "tools:\n  - {[a]: 1}\n", "line 2: a key must be a plain name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load("tools.yaml", []byte(c.src))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "tools.yaml: ") {
				t.Fatalf("error %v, want one with %q", err, c.want)
			}
		})
	}
}

// FuzzToJSON: whatever toJSON accepts it turns into valid JSON.
func FuzzToJSON(f *testing.F) {
	for _, s := range []string{"tools: [{name: a, input_schema: {type: object}}]", "a: &a {b: 1}\nc: {<<: *a, d: 0x1F}", "on: [yes, no, ~, .5, 1_000]", "- !!str 1\n- !!binary aGk=", "a: &a [*a]", "{a: 1, a: 2}", "--- 1\n--- 2"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		js, err := toJSON(data)
		if err == nil && !json.Valid(js) {
			t.Fatalf("toJSON(%q) = %q, not JSON", data, js)
		}
	})
}
