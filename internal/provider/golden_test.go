package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const fixtureRoot = "../../testdata/provider-fixtures"

// projectFixtures holds the fixtures of providers the shared collection has
// none of (their sources in testdata/provider-fixtures/SOURCES.md).
const projectFixtures = "testdata/provider-fixtures"

// fixtureDir is where a provider's fixtures are: the shared collection, or
// the project's own testdata/provider-fixtures.
func fixtureDir(provider string) string {
	if _, err := os.Stat(filepath.Join(fixtureRoot, provider)); err == nil {
		return filepath.Join(fixtureRoot, provider)
	}
	return filepath.Join(projectFixtures, provider)
}

// fixtureProvider is the provider a fixture is written in: its directory,
// except Ollama's OpenAI-compatible recording.
func fixtureProvider(dir, name string) string {
	if strings.HasPrefix(name, "ollama-openai-compat-") {
		return OpenAIChat
	}
	return dir
}

type fixture struct {
	dir, name, provider string
	data                []byte
}

func (f fixture) streamed() bool { return !strings.HasSuffix(f.name, ".json") }

func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	var out []fixture
	for _, dir := range Names() { // every provider has its fixtures
		entries, err := os.ReadDir(fixtureDir(dir))
		if err != nil {
			t.Fatalf("read fixtures: %v", err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(fixtureDir(dir), e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fixture{dir: dir, name: e.Name(), provider: fixtureProvider(dir, e.Name()), data: data})
		}
	}
	if len(out) < 70 {
		t.Fatalf("found %d fixtures, want the whole collection", len(out))
	}
	return out
}

// segments splits a stream's events into the responses it holds: a recording
// of an agent run holds several back to back.
func segments(t testing.TB, provider string, events [][]byte) [][][]byte {
	t.Helper()
	var segs [][][]byte
	a, _ := NewAccumulator(provider)
	var cur [][]byte
	for i, ev := range events {
		err := a.Add(ev)
		if errors.Is(err, ErrAfterTerminal) {
			segs = append(segs, cur)
			cur = nil
			a, _ = NewAccumulator(provider)
			err = a.Add(ev)
		}
		if err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
		cur = append(cur, ev)
	}
	return append(segs, cur)
}

func normalizeFixture(t testing.TB, f fixture) []Response {
	t.Helper()
	if IsTranscript(f.data) != f.streamed() {
		t.Fatalf("IsTranscript = %v for %s", !f.streamed(), f.name)
	}
	if !f.streamed() {
		r, err := ParseResponse(f.provider, f.data)
		if err != nil {
			t.Fatalf("ParseResponse: %v", err)
		}
		return []Response{r}
	}
	events, err := SplitTranscript(f.data)
	if err != nil {
		t.Fatal(err)
	}
	var out []Response
	for _, seg := range segments(t, f.provider, events) {
		a, _ := NewAccumulator(f.provider)
		for _, ev := range seg {
			if err := a.Add(ev); err != nil {
				t.Fatal(err)
			}
		}
		// The recording ended: a stream waiting only for an optional
		// last event settles, as accumulate settles it after its grace.
		a.Settle()
		out = append(out, a.Response())
	}
	return out
}

func TestFixtures_match_golden(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(f.dir+"/"+f.name, func(t *testing.T) {
			got, err := json.MarshalIndent(normalizeFixture(t, f), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", f.dir, f.name+".golden.json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("golden missing (run go test -run TestFixtures_match_golden -update): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("normalized %s differs from %s\ngot:\n%s", f.name, path, got)
			}
		})
	}
}

func TestFixtures_every_response_is_complete(t *testing.T) {
	for _, f := range loadFixtures(t) {
		for i, r := range normalizeFixture(t, f) {
			if !r.Complete {
				t.Errorf("%s/%s response %d: not complete", f.dir, f.name, i)
			}
		}
	}
}
