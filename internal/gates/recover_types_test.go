package gates

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/parse"
	"github.com/toolgate/toolgate/internal/textcall"
	"github.com/toolgate/toolgate/internal/tool"
)

const typedToolsYAML = `
tools:
  - name: lookup
    description: Looks an address up.
    input_schema:
      type: object
      properties:
        zip: {type: string}
        a: {type: string}
        count: {type: integer}
        note: {type: [string, "null"]}
        opts: {type: object}
      required: [zip]
      additionalProperties: false
`

func typedParseGate(t *testing.T) *Parse {
	t.Helper()
	defs, err := tool.Load("tools.yaml", []byte(typedToolsYAML))
	if err != nil {
		t.Fatal(err)
	}
	m := repairTools{}
	for i, d := range defs {
		c, err := tool.Compile(d, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		m[d.Name] = c
	}
	return &Parse{Tools: m, Limits: parse.DefaultLimits(), Now: func() time.Time { return repairT0 }}
}

func recoverText(t *testing.T, g *Parse, text string) []call.Envelope {
	t.Helper()
	c := call.New("resp-typed", 0, repairT0)
	c.CallID = "resp-typed-text"
	c.Carrier, c.Source, c.Text, c.FinishReason = true, call.SourceTextJSON, text, "stop"
	out, err := g.Handle(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Before issue 16, <parameter=zip>94107</parameter> became the number 94107
// and the call was discarded ("zip: must be string, got number").
func TestRecover_qwen_xml_values_follow_the_schema(t *testing.T) {
	g := typedParseGate(t)
	xml := func(params string) string {
		return "<tool_call>\n<function=lookup>\n" + params + "</function>\n</tool_call>"
	}
	for _, test := range []struct {
		name, params string
		want         call.Status
		args         string // canonical arguments of a parsed call
		says         string // in the errors of a discarded call, or the history
	}{
		{"zip_string_stays_string", "<parameter=zip>\n94107\n</parameter>\n", call.Parsed, `{"zip":"94107"}`, "zip: kept as string (schema type string)"},
		{"a_string_stays_string", "<parameter=zip>x</parameter><parameter=a>1</parameter>", call.Parsed, `{"a":"1","zip":"x"}`, "a: kept as string"},
		{"integer_declared_is_read", "<parameter=zip>x</parameter><parameter=count>1</parameter>", call.Parsed, `{"count":1,"zip":"x"}`, "count: read as integer"},
		{"null_of_a_nullable_string", "<parameter=zip>x</parameter><parameter=note>null</parameter>", call.Parsed, `{"note":null,"zip":"x"}`, "note: read as null"},
		{"object_declared_is_read", "<parameter=zip>x</parameter><parameter=opts>{\"k\": [1]}</parameter>", call.Parsed, `{"opts":{"k":[1]},"zip":"x"}`, "opts: read as object"},
		{"not_an_integer_is_discarded_by_the_schema", "<parameter=zip>x</parameter><parameter=count>abc</parameter>", call.Discarded, "", "must be integer"},
	} {
		t.Run(test.name, func(t *testing.T) {
			out := recoverText(t, g, xml(test.params))
			if len(out) != 1 {
				t.Fatalf("%d envelopes, want 1", len(out))
			}
			e := out[0]
			if e.Status != test.want {
				t.Fatalf("status %s (%v), want %s", e.Status, e.Errors, test.want)
			}
			var history []string
			for _, h := range e.History {
				history = append(history, h.Note)
			}
			if test.want == call.Parsed {
				if string(e.Arguments) != test.args || e.RawArguments != test.args {
					t.Fatalf("arguments %s raw %s, want %s", e.Arguments, e.RawArguments, test.args)
				}
				if !strings.Contains(strings.Join(history, "; "), test.says) {
					t.Fatalf("history %q does not record %q", history, test.says)
				}
				return
			}
			if errs := strings.Join(e.Errors, "; "); !strings.Contains(errs, test.says) || !strings.Contains(errs, "count") {
				t.Fatalf("errors %q: want the schema naming count and %q", errs, test.says)
			}
			if !strings.Contains(strings.Join(history, "; "), "count: kept as string: the text does not read as integer") {
				t.Fatalf("history %q does not record that count stayed a string", history)
			}
		})
	}
}

func TestDeclaredTypes_reads_type_lists_alternatives_enums_and_nullable(t *testing.T) {
	types := declaredTypes([]byte(`{"type":"object","properties":{
		"a":{"type":"string"},"b":{"type":["integer","null"]},
		"c":{"anyOf":[{"type":"string"},{"type":"number"}]},"d":{"enum":["x",1,null]},
		"e":{"type":"string","nullable":true},"f":{"description":"anything"},"g":{"const":true}},
		"oneOf":[{"properties":{"h":{"type":"boolean"}}}]}`))
	for p, want := range map[string]string{"a": "string", "b": "integer,null", "c": "string,number", "d": "string,integer,null",
		"e": "string,null", "f": "", "g": "boolean", "h": "boolean", "missing": ""} {
		if got := strings.Join(types(p), ","); got != want {
			t.Errorf("%s: types %q, want %q", p, got, want)
		}
	}
	if declaredTypes([]byte(`not json`)) != nil {
		t.Fatal("an unreadable schema declares types")
	}
}

func TestRecover_typing_keeps_arguments_a_dialect_left_out_of_params(t *testing.T) {
	g := typedParseGate(t)
	tl, _ := g.Tools.Lookup("lookup")
	f := textcall.Call{Name: "lookup", Arguments: []byte(`{"count":2,"zip":94107}`), Params: map[string]string{"zip": "94107"}}
	args, note, err := typed(f, tl, true)
	if err != nil || string(args) != `{"count":2,"zip":"94107"}` || !strings.Contains(note, "zip: kept as string") {
		t.Fatalf("arguments %s note %q err %v, want count kept and zip a string", args, note, err)
	}
}
