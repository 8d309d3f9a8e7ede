package textcall

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/internal/canon"
)

// familyCase is one fixture of testdata/<family>/expected.json: the calls
// Recover must find, in order, and how many Discards it must report.
type familyCase struct {
	Source   string `json:"source"`
	Format   string `json:"format"`
	Discards int    `json:"discards"`
	Calls    []struct {
		Name      string            `json:"name"`
		Arguments json.RawMessage   `json:"arguments"`
		Params    map[string]string `json:"params"`
	} `json:"calls"`
}

// familyFixtures reads every testdata/<family>/expected.json.
func familyFixtures(t testing.TB) map[string]familyCase {
	t.Helper()
	docs, _ := filepath.Glob(filepath.Join("testdata", "*", "expected.json"))
	out := map[string]familyCase{}
	for _, doc := range docs {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		var cases map[string]familyCase
		if err := json.Unmarshal(raw, &cases); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		for name, c := range cases {
			if c.Source == "" {
				t.Fatalf("%s: %s does not say where it comes from", doc, name)
			}
			out[filepath.Join(filepath.Dir(doc), name)] = c
		}
	}
	return out
}

func TestRecover_family_fixtures(t *testing.T) {
	cases := familyFixtures(t)
	if len(cases) < 40 {
		t.Fatalf("%d family fixtures", len(cases))
	}
	for path, want := range cases {
		t.Run(path, func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			text := string(raw)
			calls, discards := Recover(text)
			if len(calls) != len(want.Calls) || len(discards) != want.Discards {
				t.Fatalf("calls %v, discards %+v; want %d calls, %d discards", summary(calls), discards, len(want.Calls), want.Discards)
			}
			for i, w := range want.Calls {
				args, err := canon.JSON(w.Arguments)
				if err != nil {
					t.Fatal(err)
				}
				got := calls[i]
				if got.Name != w.Name || string(got.Arguments) != string(args) {
					t.Fatalf("call %d = %s %s, want %s %s", i, got.Name, got.Arguments, w.Name, args)
				}
				if want.Format != "" && got.Format != want.Format {
					t.Fatalf("call %d format %q, want %q", i, got.Format, want.Format)
				}
				if w.Params != nil && !maps.Equal(got.Params, w.Params) {
					t.Fatalf("call %d params %q, want %q", i, got.Params, w.Params)
				}
				if got.Start < 0 || got.End > len(text) || got.Start >= got.End {
					t.Fatalf("call %d span %d..%d outside the text", i, got.Start, got.End)
				}
			}
		})
	}
}
