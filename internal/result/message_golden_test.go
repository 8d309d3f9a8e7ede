package result

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/provider"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/messages.golden")

// goldenOutcomes covers every provider's tool-result shape: ok, failed, dry
// run, cut and non-JSON results, missing ids and names, HTML characters.
func goldenOutcomes() []Outcome {
	var out []Outcome
	cut := Cut(json.RawMessage(`"`+strings.Repeat("x", 300)+`"`), 64, 32)
	for _, p := range append(provider.Names(), "", "llama.cpp") {
		out = append(out,
			Outcome{Provider: p, CallID: "tg-1", ProviderCallID: "prov-1", Tool: "t", Status: "executed", OK: true, Result: json.RawMessage(` {"a": "<b & c>"} `)},
			Outcome{Provider: p, CallID: "tg-1", Tool: "t", Status: "executed", OK: true, Result: json.RawMessage(`[1, 2]`)},
			Outcome{Provider: p, CallID: "tg-1", Tool: "t", Status: "executed", OK: true, Result: json.RawMessage(`not json <&>`)},
			Outcome{Provider: p, CallID: "tg-1", Tool: "t", Status: "executed", OK: true},
			Outcome{Provider: p, CallID: "tg-1", Tool: "t", Status: "executed", OK: true, Result: cut},
			Outcome{Provider: p, CallID: "tg-1", ProviderCallID: "p", Tool: "t", Status: "dry_run", OK: true, Result: json.RawMessage(`{"x":1}`)},
			Outcome{Provider: p, CallID: "tg-2", ProviderCallID: "prov-2", Tool: "t", Status: "schema_invalid", Errors: []string{"a: <bad>"}},
			Outcome{Provider: p, Tool: "t", Status: "policy_rejected"},
			Outcome{Provider: p, CallID: "tg-3", Status: "no_such_tool", ValidTools: []string{"a", "b"}},
		)
	}
	return out
}

// TestMessage_golden pins every provider's tool-result JSON byte for byte
// (and the error text of an outcome that cannot be answered, which a result
// carries as {"error": ...}).
func TestMessage_golden(t *testing.T) {
	var b strings.Builder
	for _, o := range goldenOutcomes() {
		m, err := Message(o)
		if err != nil {
			b.WriteString("error: " + err.Error() + "\n")
			continue
		}
		b.Write(m)
		b.WriteString("\n")
	}
	const path = "testdata/messages.golden"
	if *updateGolden {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("tool-result messages changed:\n got:\n%s\nwant:\n%s", b.String(), want)
	}
}
