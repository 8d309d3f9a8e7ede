package provider

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// localFixtureRoot holds the project's own recorded responses (SOURCES.md
// there names each one's origin). loadFixtures reads it for the providers
// the shared collection lacks; these tests read the rest: the project's own
// fixtures of providers the shared collection has too.
const localFixtureRoot = projectFixtures

func loadLocalFixtures(t testing.TB) []fixture {
	t.Helper()
	var out []fixture
	dirs, err := os.ReadDir(localFixtureRoot)
	if err != nil {
		t.Fatalf("read local fixtures: %v", err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(fixtureRoot, d.Name())); !d.IsDir() || !Known(d.Name()) || err != nil {
			continue // not a provider, or one only the project has: loadFixtures reads it
		}
		entries, err := os.ReadDir(filepath.Join(localFixtureRoot, d.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(localFixtureRoot, d.Name(), e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fixture{dir: d.Name(), name: e.Name(), provider: d.Name(), data: data})
		}
	}
	if len(out) < 13 {
		t.Fatalf("found %d local fixtures, want the whole collection", len(out))
	}
	return out
}

func localFixture(t *testing.T, dir, name string) []Response {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(localFixtureRoot, dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return normalizeFixture(t, fixture{dir: dir, name: name, provider: dir, data: data})
}

// TestLocalFixtures_match_golden: each of the project's own fixtures
// normalizes to its golden file (go test -run TestLocalFixtures -update).
func TestLocalFixtures_match_golden(t *testing.T) {
	for _, f := range loadLocalFixtures(t) {
		t.Run(f.dir+"/"+f.name, func(t *testing.T) {
			rs := normalizeFixture(t, f)
			got, err := json.MarshalIndent(rs, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", f.dir, f.name+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("golden missing (run go test -run TestLocalFixtures_match_golden -update): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("normalized %s differs from %s\ngot:\n%s", f.name, path, got)
			}
			for i, r := range rs {
				if !r.Complete {
					t.Errorf("response %d not complete", i)
				}
			}
		})
	}
}

// TestLocalFixtures_streams_cut_at_every_event_are_done_only_after_the_terminal_event:
// no prefix of a recorded stream is Complete unless it holds the terminal
// event (the oracle of testdata/terminal), and nothing after it changes the
// calls; no proper prefix of a whole body parses.
func TestLocalFixtures_streams_cut_at_every_event_are_done_only_after_the_terminal_event(t *testing.T) {
	for _, f := range loadLocalFixtures(t) {
		t.Run(f.dir+"/"+f.name, func(t *testing.T) {
			if !f.streamed() {
				body := bytes.TrimSpace(f.data)
				for k := 0; k < len(body); k++ {
					if r, err := ParseResponse(f.provider, body[:k]); err == nil {
						t.Fatalf("prefix of %d bytes accepted as a whole response: %+v", k, r)
					}
				}
				return
			}
			events, err := SplitTranscript(f.data)
			if err != nil {
				t.Fatal(err)
			}
			rules := loadTerminal(t, f.provider)
			for si, seg := range segments(t, f.provider, events) {
				var atTerminal []Call
				for k := 0; k <= len(seg); k++ {
					a, _ := NewAccumulator(f.provider)
					terminal, oracle := false, rules.start()
					for _, ev := range seg[:k] {
						if err := a.Add(ev); err != nil {
							t.Fatalf("segment %d: %v", si, err)
						}
						terminal = oracle.add(t, ev)
					}
					r := a.Response()
					if a.Done() != terminal || r.Complete != terminal {
						t.Fatalf("segment %d cut after %d of %d events: Done=%v, terminal seen=%v", si, k, len(seg), a.Done(), terminal)
					}
					if terminal && atTerminal == nil {
						atTerminal = r.Calls
					}
					if k == len(seg) && terminal && !reflect.DeepEqual(r.Calls, atTerminal) {
						t.Errorf("segment %d: events after the terminal one changed the calls", si)
					}
				}
			}
		})
	}
}
