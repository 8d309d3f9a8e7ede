package gates

import (
	"bytes"
	"testing"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/canon"
)

// The parse gate marks the arguments it hands on as canonical
// (call.Envelope.ArgsCanonical), and parse's seal then hashes them as they
// are: so they must be exactly canonical JSON, whatever form they arrived
// in, and the mark must not survive a hop.
func TestParse_marks_arguments_it_made_canonical_and_they_are(t *testing.T) {
	g := newParseGate(t)
	for _, raw := range []string{
		`{"city":"Paris"}`,
		` { "city" : "Paris" } `,
		`{"city":"Par\u0069s","units":1.50E+2,"zone":null,"tags":[ "a" , {"z":1,"a":2} ]}`,
		`{"b":{"y":"\u00e9\n","x":true},"a":-0}`,
		``, // a finished call without arguments is {}
	} {
		e := call.New("resp-canon", 0, repairT0)
		e.Provider, e.ToolName, e.RawArguments, e.FinishReason = "openai-chat", "get_weather", raw, "tool_calls"
		out := parseOne(t, g, e)
		if out.Status != call.Parsed || !out.ArgsCanonical {
			t.Fatalf("%q: %s, marked canonical %v (%v)", raw, out.Status, out.ArgsCanonical, out.Errors)
		}
		again, err := canon.JSON(out.Arguments)
		if err != nil || !bytes.Equal(again, out.Arguments) {
			t.Errorf("%q: parse handed on %s, its canonical form is %s (%v)", raw, out.Arguments, again, err)
		}
		for name, b := range map[string][]byte{"hop": out.MarshalHop(), "json": mustJSON(t, &out)} {
			d, err := call.Unmarshal(b)
			if err != nil {
				t.Fatal(err)
			}
			if d.ArgsCanonical {
				t.Errorf("%q: the mark survived a %s hop", raw, name)
			}
		}
	}
	// Arguments that do not parse are not marked.
	e := call.New("resp-canon", 1, repairT0)
	e.Provider, e.ToolName, e.RawArguments, e.FinishReason = "openai-chat", "get_weather", `{"city":`, "tool_calls"
	if out := parseOne(t, g, e); out.Status == call.Parsed || out.ArgsCanonical {
		t.Fatalf("%s, marked canonical %v", out.Status, out.ArgsCanonical)
	}
}

func mustJSON(t *testing.T, e *call.Envelope) []byte {
	t.Helper()
	b, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
