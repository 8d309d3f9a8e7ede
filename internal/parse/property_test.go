package parse

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

const fixtures = "../../testdata/provider-fixtures"

// fixtureArguments returns every argument document in the fixtures: the
// "arguments" strings of the OpenAI-style whole responses and the expected
// arguments of the text formats.
func fixtureArguments(t testing.TB) [][]byte {
	t.Helper()
	var docs [][]byte
	for _, dir := range []string{"openai-chat", "openai-responses", "ollama"} {
		files, err := filepath.Glob(filepath.Join(fixtures, dir, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no fixtures in %s: %v", dir, err)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			collectArguments(v, &docs)
		}
	}
	raw, err := os.ReadFile(filepath.Join(fixtures, "text-formats", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var expected map[string]struct {
		Calls []struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"expected_tool_calls"`
	}
	if err := json.Unmarshal(raw, &expected); err != nil {
		t.Fatal(err)
	}
	for _, e := range expected {
		for _, c := range e.Calls {
			if len(c.Arguments) > 0 {
				docs = append(docs, c.Arguments)
			}
		}
	}
	return docs
}

func collectArguments(v any, docs *[][]byte) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "arguments" && len(s) > 0 && s[0] == '{' {
				*docs = append(*docs, []byte(s))
			}
			collectArguments(e, docs)
		}
	case []any:
		for _, e := range v {
			collectArguments(e, docs)
		}
	}
}

func TestStrict_no_fixture_prefix_is_accepted(t *testing.T) {
	docs := fixtureArguments(t)
	if len(docs) < 15 {
		t.Fatalf("only %d argument documents found in the fixtures", len(docs))
	}
	for _, doc := range docs {
		whole := bytes.TrimRight(doc, " \t\r\n")
		if _, _, err := Strict(doc, DefaultLimits()); err != nil {
			t.Fatalf("whole fixture %q refused: %v", doc, err)
		}
		for k := 0; k < len(whole); k++ {
			prefix := whole[:k]
			_, _, err := Strict(prefix, DefaultLimits())
			want := CodeTruncated
			if len(bytes.TrimSpace(prefix)) == 0 {
				want = CodeEmpty
			}
			if err == nil || err.Code != want {
				t.Fatalf("prefix %q of %q: %v, want %s", prefix, doc, err, want)
			}
		}
		if _, _, err := Strict(append(append([]byte{}, whole...), " \n"...), DefaultLimits()); err != nil {
			t.Fatalf("whole fixture with trailing white space refused: %v", err)
		}
	}
}

func TestError_excerpt_is_bounded_and_marked(t *testing.T) {
	doc := []byte(`{"long": "` + string(bytes.Repeat([]byte("é"), 100)) + `", "x": ?}`)
	_, _, err := Strict(doc, DefaultLimits())
	if err == nil {
		t.Fatal("accepted")
	}
	if len(err.Excerpt) > 2*excerptRadius+len(Marker)+2*len("…")+4 {
		t.Fatalf("excerpt %d bytes: %q", len(err.Excerpt), err.Excerpt)
	}
	if !bytes.HasPrefix([]byte(err.Excerpt), []byte("…")) || !bytes.Contains([]byte(err.Excerpt), []byte(Marker+"?}")) {
		t.Fatalf("excerpt %q", err.Excerpt)
	}
}
