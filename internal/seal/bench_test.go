package seal_test

import (
	"testing"

	"github.com/toolgate/toolgate/internal/seal/sealtest"
)

// BenchmarkSeal_every_gate is the sealing work of one call on its way to
// execute: accumulate, parse, validate, business and policy each seal it.
func BenchmarkSeal_every_gate(b *testing.B) {
	kr := sealtest.Keys(b)
	base := approvedCall()
	b.ReportAllocs()
	for b.Loop() {
		e := base
		if err := sealtest.Apply(kr, &e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSeal_verify_at_execute is execute's check of the five seals.
func BenchmarkSeal_verify_at_execute(b *testing.B) {
	kr := sealtest.Keys(b)
	e := sealedCall(b, kr)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := kr.Verify(&e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSeal_per_call is both: what seals cost one executed call.
func BenchmarkSeal_per_call(b *testing.B) {
	kr := sealtest.Keys(b)
	base := approvedCall()
	b.ReportAllocs()
	for b.Loop() {
		e := base
		if err := sealtest.Apply(kr, &e); err != nil {
			b.Fatal(err)
		}
		if _, err := kr.Verify(&e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSeal_every_gate_parse_marked is BenchmarkSeal_every_gate with
// the arguments marked canonical, as the parse gate hands them on
// (call.Envelope.ArgsCanonical): parse's seal does not canonicalise again.
func BenchmarkSeal_every_gate_parse_marked(b *testing.B) {
	kr := sealtest.Keys(b)
	base := approvedCall()
	base.ArgsCanonical = true
	b.ReportAllocs()
	for b.Loop() {
		e := base
		if err := sealtest.Apply(kr, &e); err != nil {
			b.Fatal(err)
		}
	}
}
