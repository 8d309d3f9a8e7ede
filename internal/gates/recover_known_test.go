package gates

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/parse"
	"github.com/toolgate/toolgate/internal/tool"
)

// OLMo 3 writes its calls without <function_calls> at times: the gate
// reads a text that is only bare calls of registered tools (issue 32), and
// leaves a bare call of an unregistered name as prose.
func TestRecover_bare_pythonic_call_of_a_registered_tool(t *testing.T) {
	g := typedParseGate(t)
	out := recoverText(t, g, `lookup(zip="94107", count=2)`)
	if len(out) != 1 || out[0].Status != call.Parsed || out[0].ToolName != "lookup" || string(out[0].Arguments) != `{"count":2,"zip":"94107"}` {
		t.Fatalf("got %+v", out)
	}
	out = recoverText(t, g, `wipe(zip="94107")`)
	if len(out) != 1 || out[0].Status != call.NoToolCalls {
		t.Fatalf("an unregistered bare call: %+v", out)
	}
}

const untypedToolsYAML = `
tools:
  - name: note
    description: Keeps a note.
    input_schema:
      type: object
      properties:
        a: {description: any value}
        n: {type: integer}
      additionalProperties: {type: integer}
`

// A parameter the tool's schema gives no type keeps the text the model
// wrote: GLM 4.7's <arg_value>1</arg_value> and Qwen3-Coder's
// <parameter=a>1</parameter> are the string "1", as the engines read them,
// not the number 1 (issue 32). A declared type still converts, and an
// unlisted parameter takes additionalProperties' type.
func TestRecover_untyped_parameter_keeps_its_text(t *testing.T) {
	defs, err := tool.Load("tools.yaml", []byte(untypedToolsYAML))
	if err != nil {
		t.Fatal(err)
	}
	c, err := tool.Compile(defs[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	g := &Parse{Tools: repairTools{"note": c}, Limits: parse.DefaultLimits(), Now: func() time.Time { return repairT0 }}
	for _, text := range []string{
		"<tool_call>note<arg_key>a</arg_key><arg_value>1</arg_value><arg_key>n</arg_key><arg_value>2</arg_value><arg_key>x</arg_key><arg_value>3</arg_value></tool_call>",
		"<tool_call>\n<function=note>\n<parameter=a>\n1\n</parameter>\n<parameter=n>\n2\n</parameter>\n<parameter=x>\n3\n</parameter>\n</function>\n</tool_call>",
	} {
		out := recoverText(t, g, text)
		if len(out) != 1 || out[0].Status != call.Parsed || string(out[0].Arguments) != `{"a":"1","n":2,"x":3}` {
			t.Fatalf("%q: got %+v", text, out)
		}
	}
}
