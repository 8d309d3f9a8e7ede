package seal_test

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
)

// Passed judges a call's seals by their stages, verdicts, call ids and
// order (no keys): the gates since the last source seal, in order, up to
// the first one missing after the gate before it.
func TestPassed_lists_the_gates_a_replay_may_skip(t *testing.T) {
	const id = "resp-1-0"
	s := func(stage string) call.Seal { return call.Seal{Stage: stage, Status: seal.Verdict(stage), Call: id} }
	other := func(stage string) call.Seal { x := s(stage); x.Call = "resp-1-1"; return x }
	as := func(stage string, status call.Status) call.Seal { x := s(stage); x.Status = status; return x }
	acc, rep, parse, val, bus, pol := s("accumulate"), s("repair"), s("parse"), s("validate"), s("business"), s("policy")
	for _, c := range []struct {
		name  string
		seals []call.Seal
		want  []string // nil: no source seal
	}{
		{"no seal", nil, nil},
		{"gates without a source", []call.Seal{parse, val}, nil},
		{"a source sealed as something else", []call.Seal{as("accumulate", "parsed"), parse}, nil},
		{"a source only", []call.Seal{acc}, []string{}},
		{"every gate", []call.Seal{acc, parse, val, bus, pol}, []string{"parse", "validate", "business", "policy"}},
		{"through validate", []call.Seal{acc, parse, val}, []string{"parse", "validate"}},
		{"repair is a source", []call.Seal{rep, parse}, []string{"parse"}},
		{"a gap stops the list", []call.Seal{acc, parse, bus, pol}, []string{"parse"}},
		{"out of order stops the list", []call.Seal{acc, val, parse, bus}, []string{"parse"}},
		{"the last source counts", []call.Seal{acc, parse, val, bus, pol, rep, parse}, []string{"parse"}},
		{"a later source with nothing after", []call.Seal{acc, parse, val, rep}, []string{}},
		{"gates before the last source do not count", []call.Seal{acc, parse, val, bus, rep, val}, []string{}},
		{"a later pass of a gate supersedes", []call.Seal{acc, parse, val, bus, val, bus, pol}, []string{"parse", "validate", "business", "policy"}},
		{"a later pass out of order", []call.Seal{acc, parse, val, bus, pol, parse}, []string{"parse"}},
		{"another call's seal", []call.Seal{acc, other("parse"), val}, []string{}},
		{"another call's later seal", []call.Seal{acc, parse, val, other("business"), pol}, []string{"parse", "validate"}},
		{"a gate sealed with another verdict", []call.Seal{acc, parse, as("validate", "schema_invalid"), bus}, []string{"parse"}},
		{"a failed source after a good one", []call.Seal{acc, parse, as("repair", "failed"), val}, []string{"parse", "validate"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := &call.Envelope{CallID: id, Seals: c.seals}
			got := seal.Passed(e)
			if (got == nil) != (c.want == nil) || !slices.Equal(got, c.want) {
				t.Fatalf("Passed = %#v, want %#v", got, c.want)
			}
		})
	}
}
