package schema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCompile_formats_are_asserted_by_default(t *testing.T) {
	sch := mustCompile(t, "book", `{"type":"object","properties":{
		"date":{"type":"string","format":"date"},
		"at":{"type":"string","format":"date-time"},
		"email":{"type":"string","format":"email"},
		"id":{"type":"string","format":"uuid"},
		"link":{"type":"string","format":"uri"}}}`)
	valid := `{"date":"2025-03-01","at":"2025-03-01T10:00:00Z","email":"ann@acme.io","id":"3f2c1a4e-9b7d-4c1e-8f00-1a2b3c4d5e6f","link":"https://acme.io/x"}`
	if got := sch.Validate(decode(t, valid)); got != nil {
		t.Errorf("valid formats: got problems %v", got)
	}
	got := sch.Validate(decode(t, `{"date":"soon","at":"tomorrow 10am","email":"TODO","id":"123","link":"acme dot io"}`))
	paths := map[string]bool{}
	for _, p := range got {
		if p.Keyword != "format" {
			t.Errorf("problem %v: keyword %q, want format", p, p.Keyword)
		}
		paths[p.Path] = true
	}
	for _, want := range []string{"/date", "/at", "/email", "/id", "/link"} {
		if !paths[want] {
			t.Errorf("no format problem at %s; got %v", want, got)
		}
	}
	if s := got[0].String(); !strings.Contains(s, "must be a valid") {
		t.Errorf("format message %q does not say what is expected", s)
	}
}

func TestCompile_without_format_assertion_treats_format_as_annotation(t *testing.T) {
	sch := mustCompile(t, "book", `{"properties":{"date":{"format":"date"}}}`, WithoutFormatAssertion())
	if got := sch.Validate(decode(t, `{"date":"soon"}`)); got != nil {
		t.Errorf("got %v, want no problems", got)
	}
}

func TestCompile_draft07_keyword_is_honoured(t *testing.T) {
	// In draft-07 keywords beside $ref are ignored; in 2020-12 they apply.
	const body = `"$defs":{"s":{"type":"string"}},"definitions":{"s":{"type":"string"}},"properties":{"x":{"$ref":"#/definitions/s","minLength":5}}`
	d7 := mustCompile(t, "t", `{"$schema":"http://json-schema.org/draft-07/schema#",`+body+`}`)
	d2020 := mustCompile(t, "t", `{`+body+`}`)
	doc := decode(t, `{"x":"ab"}`)
	if got := d7.Validate(doc); got != nil {
		t.Errorf("draft-07: got %v, want minLength beside $ref ignored", got)
	}
	if got := d2020.Validate(doc); len(got) != 1 || got[0].Keyword != "minLength" {
		t.Errorf("2020-12 default: got %v, want one minLength problem", got)
	}
	d7default := mustCompile(t, "t", `{`+body+`}`, WithDefaultDraft(Draft7))
	if got := d7default.Validate(doc); got != nil {
		t.Errorf("WithDefaultDraft(Draft7): got %v, want no problems", got)
	}
}

func TestCompile_external_refs_are_never_fetched(t *testing.T) {
	for _, ref := range []string{
		"https://example.com/schemas/address.json",
		"http://localhost:1234/integer.json",
		"file:///etc/passwd",
		"address.json",
	} {
		t.Run(ref, func(t *testing.T) {
			_, err := Compile("ship", json.RawMessage(`{"properties":{"a":{"$ref":"`+ref+`"}}}`))
			if !errors.Is(err, ErrExternalRef) {
				t.Fatalf("err = %v, want ErrExternalRef", err)
			}
			if !strings.Contains(err.Error(), "ship") || !strings.Contains(err.Error(), "$defs") {
				t.Errorf("error %q should name the tool and say to inline under $defs", err)
			}
		})
	}
}

func TestCompile_preloaded_resource_resolves_in_memory(t *testing.T) {
	res := map[string]any{"https://schemas.acme.io/money.json": decode(t, `{"type":"integer","minimum":0}`)}
	sch := mustCompile(t, "pay", `{"properties":{"amount":{"$ref":"https://schemas.acme.io/money.json"}}}`, WithResources(res))
	if got := strs(sch.Validate(decode(t, `{"amount":-1}`))); len(got) != 1 || got[0] != "amount: must be >= 0, got -1 (minimum)" {
		t.Errorf("got %q", got)
	}
}

func TestCompile_local_refs_work(t *testing.T) {
	sch := mustCompile(t, "pay", `{"$defs":{"m":{"type":"integer"}},"properties":{"amount":{"$ref":"#/$defs/m"}}}`)
	if got := sch.Validate(decode(t, `{"amount":"x"}`)); len(got) != 1 || got[0].Path != "/amount" {
		t.Errorf("got %v", got)
	}
}

func TestCompile_broken_schemas_are_refused_with_the_tool_name(t *testing.T) {
	for _, test := range []struct{ name, raw, want string }{
		{"not_json", `{"type":`, "not JSON"},
		{"empty", ``, "empty"},
		{"wrong_keyword_type", `{"type":5}`, "does not compile: input_schema/type: must be one of"},
		{"bad_pattern", `{"pattern":"(["}`, "input_schema/pattern: must be a valid regex"},
		{"unknown_draft", `{"$schema":"https://example.com/my-draft"}`, "not fetched"},
	} {
		t.Run(test.name, func(t *testing.T) {
			_, err := Compile("create_invoice", json.RawMessage(test.raw))
			if err == nil {
				t.Fatal("compiled, want error")
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "schema: ") || !strings.Contains(msg, "create_invoice") || !strings.Contains(msg, test.want) {
				t.Errorf("error %q: want prefix \"schema: \", the tool name and %q", msg, test.want)
			}
			if strings.Contains(err.Error(), "toolgate:///") {
				t.Errorf("error %q leaks the internal resource URL", err)
			}
		})
	}
	if _, err := Compile("t", json.RawMessage(`{}`), WithDefaultDraft("draft-04")); err == nil {
		t.Error("unknown draft option accepted")
	}
}

func TestProblem_String_names_root_and_keyword(t *testing.T) {
	for _, test := range []struct {
		p    Problem
		want string
	}{
		{Problem{Path: "", Keyword: "type", Message: "must be object, got array"}, "(root): must be object, got array (type)"},
		{Problem{Path: "/line_items/0/quantity", Keyword: "minimum", Message: "must be >= 1, got 0"}, "line_items/0/quantity: must be >= 1, got 0 (minimum)"},
		{Problem{Path: "/a", Message: "bad"}, "a: bad"},
	} {
		if got := test.p.String(); got != test.want {
			t.Errorf("got %q, want %q", got, test.want)
		}
	}
}
