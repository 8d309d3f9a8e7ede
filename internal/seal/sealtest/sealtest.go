// Package sealtest seals hand-made envelopes in tests as the gates would
// have: tests that publish straight to a later gate hold the keys.
package sealtest

import (
	"testing"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
)

// Keys is a fresh keyring of every sealing stage.
func Keys(t testing.TB) *seal.Keyring {
	t.Helper()
	kr, err := seal.Ephemeral(seal.Sealing())
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// Dir writes fresh key files of every sealing stage into a temporary
// directory (for a stage run as its own process) and returns it with the
// keyring it holds.
func Dir(t testing.TB) (string, *seal.Keyring) {
	t.Helper()
	dir := t.TempDir()
	kr, err := seal.Ensure(dir, seal.Sealing())
	if err != nil {
		t.Fatal(err)
	}
	return dir, kr
}

// Through gives e, which holds its final tool, raw and canonical arguments
// and revision, the seals of accumulate, parse, validate, business and
// policy, as if each had passed it, and leaves it approved.
func Through(t testing.TB, kr *seal.Keyring, e *call.Envelope) {
	t.Helper()
	if err := Apply(kr, e); err != nil {
		t.Fatal(err)
	}
}

// Apply is Through without a test.
func Apply(kr *seal.Keyring, e *call.Envelope) error {
	args := e.Arguments
	e.Arguments = nil
	for _, st := range append([]string{seal.Accumulate}, seal.Gates()...) {
		e.Status = seal.Verdict(st)
		if st == seal.Parse {
			e.Arguments = args
		}
		if err := kr.Seal(st, e); err != nil {
			return err
		}
	}
	return nil
}
