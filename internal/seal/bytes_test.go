package seal_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
)

// sealAltering seals e as accumulate and the gates do, calling alter on
// its arguments after the gate at index after of seal.Gates() sealed it
// (len(Gates())-1: after policy, on the way to execute).
func sealAltering(t *testing.T, kr *seal.Keyring, e *call.Envelope, after int, alter func([]byte) []byte) {
	t.Helper()
	args := e.Arguments
	e.Arguments = nil
	e.Status = seal.Verdict(seal.Accumulate)
	if err := kr.Seal(seal.Accumulate, e); err != nil {
		t.Fatal(err)
	}
	e.Arguments = args
	for i, g := range seal.Gates() {
		e.Status = seal.Verdict(g)
		if err := kr.Seal(g, e); err != nil {
			t.Fatal(err)
		}
		if i == after {
			e.Arguments = alter(append([]byte(nil), e.Arguments...))
		}
	}
}

// Every gate after parse and execute hash the bytes they carry, not their
// canonical form again: one byte changed anywhere in the arguments, between
// any two gates or on the way to execute, and the call does not run.
func TestSeal_one_byte_of_the_arguments_altered_between_gates_is_refused(t *testing.T) {
	kr := sealtest.Keys(t)
	n := len(approvedCall().Arguments)
	for after, g := range seal.Gates() {
		for at := range n {
			e := approvedCall()
			sealAltering(t, kr, &e, after, func(b []byte) []byte { b[at] ^= 1; return b })
			var se *seal.Error
			if _, err := kr.Verify(&e); !errors.As(err, &se) {
				t.Fatalf("after %s, byte %d flipped (%s): verified (%v)", g, at, e.Arguments, err)
			}
		}
	}
}

// What a canonical hash let through, the bytes' hash refuses: arguments
// that mean the same but are not the bytes the gates passed, changed after
// parse, or not the canonical form parse sealed.
func TestSeal_arguments_that_mean_the_same_in_other_bytes_are_refused(t *testing.T) {
	kr := sealtest.Keys(t)
	for _, c := range []struct {
		name  string
		after int // the gate after which they change; -1: they arrive so at parse
		args  string
	}{
		{"keys reordered after validate", 1, `{"customer_id":"cus_1","amount":5}`},
		{"white space after business", 2, `{"amount": 5,"customer_id":"cus_1"}`},
		{"an escape on the way to execute", 3, `{"amount":5,"customer_id":"cus\u005f1"}`},
		{"not canonical at parse", -1, `{ "customer_id": "cus_1", "amount": 5 }`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := approvedCall()
			if c.after < 0 {
				e.Arguments = json.RawMessage(c.args)
			}
			sealAltering(t, kr, &e, c.after, func([]byte) []byte { return json.RawMessage(c.args) })
			if seal.ArgsHash(e.Arguments) != seal.ArgsHash(approvedCall().Arguments) {
				t.Fatalf("%s does not mean what the call's arguments mean", e.Arguments)
			}
			_, err := kr.Verify(&e)
			var se *seal.Error
			if !errors.As(err, &se) || se.Stage != seal.Parse {
				t.Fatalf("Verify: %v, want the parse seal named", err)
			}
		})
	}
}

// The canonical arguments' bytes hash to the hash a human approves, so a
// seal of either binds the same approval.
func TestSeal_bytes_hash_of_canonical_arguments_is_the_args_hash(t *testing.T) {
	args := approvedCall().Arguments
	if got, want := seal.BytesHash(args), seal.ArgsHash(args); got != want || got == "" {
		t.Fatalf("BytesHash %q, ArgsHash %q", got, want)
	}
	if seal.BytesHash(nil) != "" {
		t.Fatal("no arguments hash to something")
	}
}
