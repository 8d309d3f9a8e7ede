package seal_test

import (
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
)

// Envelopes made from one (a gate's outputs, the calls recovered from one
// carrier) share its seals' array, and a decoded envelope has room after
// its seals: each output sealed gets its own last seal, never the seal of
// another written over it.
func TestSeal_envelopes_that_share_seals_each_keep_their_own(t *testing.T) {
	kr := sealtest.Keys(t)
	for _, room := range []int{0, 1, 3} {
		base := approvedCall()
		if err := sealtest.Apply(kr, &base); err != nil {
			t.Fatal(err)
		}
		// Through business, with room after it as a decoded envelope has.
		prefix := make([]call.Seal, 4, 4+room)
		copy(prefix, base.Seals[:4])
		base.Seals = prefix
		a, b := base, base
		b.Approval = &call.Decision{By: "alice", Hash: seal.BytesHash(b.Arguments)}
		for _, e := range []*call.Envelope{&a, &b} {
			e.Status = call.Approved
			if err := kr.Seal(seal.Policy, e); err != nil {
				t.Fatal(err)
			}
		}
		for name, e := range map[string]*call.Envelope{"first": &a, "second": &b} {
			if _, err := kr.Verify(e); err != nil {
				t.Errorf("room %d: the %s output does not verify: %v", room, name, err)
			}
		}
		if len(base.Seals) != 4 {
			t.Errorf("room %d: the input's seals are now %d", room, len(base.Seals))
		}
	}
}

// The parse gate marks the arguments it made canonical (ArgsCanonical):
// parse's seal hashes those bytes as they are, without canonicalising them
// again; unmarked arguments are canonicalised as before (bytes_test.go:
// arguments not canonical at parse do not verify).
func TestSeal_parse_hashes_arguments_its_gate_made_canonical_as_they_are(t *testing.T) {
	kr := sealtest.Keys(t)
	e := approvedCall()
	e.Arguments = json.RawMessage(`{"amount": 5, "customer_id": "cus_1"}`) // marked, so trusted as they are
	e.ArgsCanonical = true
	sealtest.Through(t, kr, &e)
	p := e.Seals[1]
	if p.Stage != seal.Parse || p.Args != seal.BytesHash(e.Arguments) || p.Args == seal.ArgsHash(e.Arguments) {
		t.Fatalf("parse sealed %s %q, want the bytes' hash %q", p.Stage, p.Args, seal.BytesHash(e.Arguments))
	}
	if _, err := kr.Verify(&e); err != nil {
		t.Fatal(err)
	}
}

// A gate after parse judges the canonical arguments only: it restates the
// raw hash of the seal it chains to rather than hashing the raw arguments
// again, and raw arguments edited after parse are still refused at execute.
func TestSeal_gates_after_parse_restate_the_raw_hash(t *testing.T) {
	kr := sealtest.Keys(t)
	e := approvedCall()
	args := e.Arguments
	e.Arguments = nil
	for _, st := range append([]string{seal.Accumulate}, seal.Gates()...) {
		if st == seal.Parse {
			e.Arguments = args
		}
		if st == seal.Validate {
			e.RawArguments = `{"customer_id":"cus_1","amount":500}`
		}
		e.Status = seal.Verdict(st)
		if err := kr.Seal(st, &e); err != nil {
			t.Fatal(err)
		}
	}
	parse := e.Seals[1].Raw
	for i, s := range e.Seals[2:] {
		if s.Raw != parse {
			t.Errorf("seal %d (%s) states raw %q, parse %q", i+2, s.Stage, s.Raw, parse)
		}
	}
	if _, err := kr.Verify(&e); err == nil {
		t.Fatal("raw arguments edited after parse verified")
	}
}

// A seal goes into the room after an envelope's seals when that room is
// free, so the gates that seal one envelope in a process (and a decoded
// envelope, which has room for the next seal) copy no array: the first seal
// makes one with room for every gate's, and each later one fills it.
func TestSeal_the_seals_of_one_envelope_fill_one_array(t *testing.T) {
	kr := sealtest.Keys(t)
	e := approvedCall()
	args := e.Arguments
	e.Arguments = nil
	var first *call.Seal
	for _, st := range append([]string{seal.Accumulate}, seal.Gates()...) {
		if st == seal.Parse {
			e.Arguments = args
		}
		e.Status = seal.Verdict(st)
		if err := kr.Seal(st, &e); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = &e.Seals[0]
		} else if &e.Seals[0] != first {
			t.Fatalf("the %s seal copied the seals to another array", st)
		}
	}
	decoded := make([]call.Seal, 4, 5)
	copy(decoded, e.Seals)
	d := e
	d.Seals, d.Status = decoded, call.Approved
	if err := kr.Seal(seal.Policy, &d); err != nil {
		t.Fatal(err)
	}
	if &d.Seals[0] != &decoded[0] {
		t.Fatal("the policy seal copied a decoded envelope's seals instead of taking its room")
	}
	if _, err := kr.Verify(&d); err != nil {
		t.Fatal(err)
	}
}

// An envelope whose seals are the first seals of another's (its seals cut
// back, as a replay may) shares that array, and the slot after its seals
// holds the other's next seal: sealing it writes a new array and leaves the
// other's seal as it was.
func TestSeal_a_prefix_of_another_envelopes_seals_leaves_them_alone(t *testing.T) {
	kr := sealtest.Keys(t)
	full := sealedCall(t, kr)
	cut := full
	cut.Seals = full.Seals[:4]
	cut.Approval = &call.Decision{By: "alice", Hash: seal.BytesHash(cut.Arguments)}
	cut.Status = call.Approved
	if err := kr.Seal(seal.Policy, &cut); err != nil {
		t.Fatal(err)
	}
	for name, e := range map[string]*call.Envelope{"the longer": &full, "the cut": &cut} {
		if _, err := kr.Verify(e); err != nil {
			t.Errorf("%s envelope does not verify: %v", name, err)
		}
	}
}
