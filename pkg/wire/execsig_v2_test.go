package wire

import (
	"crypto/ed25519"
	"errors"
	"strings"
	"testing"
	"time"
)

// A v2 alone (the execute stage's default) is one signature a key: a verifier
// that checks the expiry accepts it, even one that requires it, and a
// verifier that reads only v1 (a header without e) finds nothing to verify.
func TestExecSignature_v2_alone_verifies_and_a_v1_reader_refuses_it(t *testing.T) {
	k, old := testKey(1), testKey(2)
	r := sigReq()
	h, err := SignExecV2(r, sigAt, sigAt.Add(time.Minute), k, old)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h, "v1=") || strings.Count(h, "v2=") != 2 {
		t.Fatalf("header %q: want a v2 per key and no v1", h)
	}
	for _, key := range []ed25519.PublicKey{pub(k), pub(old)} {
		if err := VerifyExecWindow(h, r, ExecWindow{Now: sigAt.Add(time.Second), RequireExpiry: true}, key); err != nil {
			t.Fatalf("the v2: %v", err)
		}
	}
	r2 := r
	r2.Body = []byte(`{"customer_id":"c_2"}`)
	if err := VerifyExecWindow(h, r2, ExecWindow{Now: sigAt}, pub(k)); !errors.Is(err, ErrExecInvalid) {
		t.Fatalf("another body: %v, want ErrExecInvalid", err)
	}
	items := strings.Split(h, ",")
	v1Reader := strings.Join(append(items[:1:1], items[2:]...), ",") // what a reader that knows no e= checks
	if err := VerifyExec(v1Reader, r, sigAt, 0, pub(k)); !errors.Is(err, ErrExecMalformed) {
		t.Fatalf("a v1 reader: %v, want ErrExecMalformed (no v1)", err)
	}
	if _, err := SignExecV2(r, sigAt, sigAt, k); err == nil {
		t.Fatal("an expiry not after the issue time was signed")
	}
}
