package provider

import (
	"os"
	"path/filepath"
	"testing"
)

// feed adds events to a new accumulator and fails on any error.
func feed(t *testing.T, provider string, events ...string) *Accumulator {
	t.Helper()
	a, err := NewAccumulator(provider)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range events {
		if err := a.Add([]byte(ev)); err != nil {
			t.Fatalf("event %d: %v", i+1, err)
		}
	}
	return a
}

// fixtureResponses normalizes one fixture file as the golden test does.
func fixtureResponses(t *testing.T, dir, name string) []Response {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir(dir), name))
	if err != nil {
		t.Fatal(err)
	}
	return normalizeFixture(t, fixture{dir: dir, name: name, provider: fixtureProvider(dir, name), data: data})
}

// wantCall is the part of a call the table tests pin down.
type wantCall struct{ name, args string }

func checkCalls(t *testing.T, r Response, finish Reason, want ...wantCall) {
	t.Helper()
	if r.Finish != finish {
		t.Errorf("Finish = %s (%s), want %s", r.Finish, r.ProviderFinish, finish)
	}
	if len(r.Calls) != len(want) {
		t.Fatalf("got %d calls %+v, want %d", len(r.Calls), r.Calls, len(want))
	}
	for i, w := range want {
		c := r.Calls[i]
		if c.Index != i || c.Name != w.name || c.Arguments != w.args {
			t.Errorf("call %d = {%d %s %s}, want {%d %s %s}", i, c.Index, c.Name, c.Arguments, i, w.name, w.args)
		}
	}
}
