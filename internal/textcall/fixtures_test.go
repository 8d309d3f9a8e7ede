package textcall

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/canon"
)

const textFormats = "../../testdata/provider-fixtures/text-formats"

type expectedCall struct {
	Name         string          `json:"name"`
	Arguments    json.RawMessage `json:"arguments"`
	ArgumentsRaw string          `json:"arguments_raw"`
}

func loadExpected(t testing.TB) map[string][]expectedCall {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(textFormats, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]struct {
		Calls []expectedCall `json:"expected_tool_calls"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string][]expectedCall{}
	for f, e := range doc {
		out[f] = e.Calls
	}
	return out
}

func readText(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(textFormats, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantFormat is the Format each fixture's calls must carry.
var wantFormat = map[string]string{
	"hermes": "hermes", "mistral": "mistral", "llama3": "json", "pythonic": "pythonic",
	"qwen3": "qwen-xml", "deepseek": "deepseek", "xlam-markdown": "fence", "xlam-think": "json",
	"harmony": "harmony", "groq": "json",
}

func TestRecover_text_format_fixtures(t *testing.T) {
	expected := loadExpected(t)
	files, _ := filepath.Glob(filepath.Join(textFormats, "*.txt"))
	if len(files) != len(expected) || len(files) < 25 {
		t.Fatalf("%d .txt fixtures, %d entries in expected.json", len(files), len(expected))
	}
	for file, want := range expected {
		t.Run(file, func(t *testing.T) {
			text := readText(t, file)
			calls, discards := Recover(text)
			if len(want) == 1 && want[0].ArgumentsRaw != "" {
				// mistral-v11-truncated-args: vLLM passes the truncated
				// argument text through as a call. toolgate never completes
				// or executes truncated JSON, so it is a Discard instead.
				if len(calls) != 0 || len(discards) != 1 || !strings.Contains(discards[0].Reason, "truncated") {
					t.Fatalf("truncated arguments: calls %v discards %+v, want one truncated discard", calls, discards)
				}
				return
			}
			if len(want) == 0 {
				if len(calls) != 0 || len(discards) == 0 {
					t.Fatalf("want no call and a discard, got calls %v discards %+v", calls, discards)
				}
				return
			}
			if len(discards) != 0 {
				t.Fatalf("unexpected discards %+v", discards)
			}
			if len(calls) != len(want) {
				t.Fatalf("got %d calls %v, want %d", len(calls), calls, len(want))
			}
			for i, w := range want {
				wantArgs, err := canon.JSON(w.Arguments)
				if err != nil {
					t.Fatal(err)
				}
				got := calls[i]
				if got.Name != w.Name || string(got.Arguments) != string(wantArgs) {
					t.Fatalf("call %d = %s %s, want %s %s", i, got.Name, got.Arguments, w.Name, wantArgs)
				}
				if f := formatFor(file); got.Format != f {
					t.Fatalf("call %d format %q, want %q", i, got.Format, f)
				}
				if got.Start < 0 || got.End > len(text) || got.Start >= got.End {
					t.Fatalf("call %d span %d..%d outside text of %d bytes", i, got.Start, got.End, len(text))
				}
			}
		})
	}
}

func formatFor(file string) string {
	keys := make([]string, 0, len(wantFormat))
	for k := range wantFormat {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		if strings.HasPrefix(file, k) {
			return wantFormat[k]
		}
	}
	return ""
}

func TestRecover_qwen_xml_keeps_raw_params(t *testing.T) {
	calls, _ := Recover(readText(t, "qwen3-coder-xml-content-typed-params.txt"))
	if len(calls) != 1 {
		t.Fatalf("calls %v", calls)
	}
	want := map[string]string{"shape": "circle", "dimensions": `{"radius": 15.5}`, "precision": "3"}
	for k, v := range want {
		if calls[0].Params[k] != v {
			t.Fatalf("Params[%s] = %q, want %q", k, calls[0].Params[k], v)
		}
	}
}

// TestRecover_every_prefix_yields_only_calls_of_the_whole_text cuts each
// fixture at every byte: no prefix may yield a call that the whole text does
// not contain, so a cut-off text never produces a completed call.
func TestRecover_every_prefix_yields_only_calls_of_the_whole_text(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(textFormats, "*.txt"))
	family, _ := filepath.Glob(filepath.Join("testdata", "*", "*.txt"))
	if len(family) == 0 {
		t.Fatal("no testdata/<family>/*.txt fixtures")
	}
	for _, f := range append(files, family...) {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		full, _ := Recover(text)
		known := map[string]bool{}
		for _, c := range full {
			known[c.Name+" "+string(c.Arguments)] = true
		}
		for k := 0; k < len(text); k++ {
			calls, _ := Recover(text[:k])
			for _, c := range calls {
				if !known[c.Name+" "+string(c.Arguments)] {
					t.Fatalf("%s cut at %d: call %s %s not in the whole text", filepath.Base(f), k, c.Name, c.Arguments)
				}
				if c.End > k {
					t.Fatalf("%s cut at %d: call span ends at %d", filepath.Base(f), k, c.End)
				}
			}
		}
	}
}
