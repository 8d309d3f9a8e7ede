package seal_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
)

// FuzzSeal_edit_never_verifies: a sealed envelope's JSON with one byte
// changed, or a few bytes written over it, never verifies, unless what the
// seals cover and execute checks came out the same (an edit of the history,
// say, or of white space).
func FuzzSeal_edit_never_verifies(f *testing.F) {
	kr := sealtest.Keys(f)
	e := sealedCall(f, kr)
	e.Approval = nil
	body, err := json.Marshal(e)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint(0), []byte{'x'})
	f.Add(uint(bytes.Index(body, []byte(`cus_1`))), []byte("cus_2"))
	f.Add(uint(bytes.Index(body, []byte(`"admin"`))), []byte(`"admin"`))
	f.Add(uint(bytes.Index(body, []byte(`billing`))), []byte("admin!!"))
	f.Add(uint(bytes.Index(body, []byte(`"mac"`))+8), []byte("A"))
	f.Fuzz(func(t *testing.T, at uint, patch []byte) {
		if len(patch) == 0 || len(patch) > 16 {
			return
		}
		edited := append([]byte(nil), body...)
		i := int(at % uint(len(edited)))
		copy(edited[i:], patch)
		if bytes.Equal(edited, body) {
			return
		}
		var got call.Envelope
		if err := json.Unmarshal(edited, &got); err != nil {
			return
		}
		if _, err := kr.Verify(&got); err == nil && !sameCovered(t, e, got) {
			t.Fatalf("an edit verified:\n%s", edited)
		}
	})
}

// sameCovered reports whether b equals a in everything the seals cover or
// execute checks.
func sameCovered(t *testing.T, a, b call.Envelope) bool {
	t.Helper()
	covered := func(e call.Envelope) []byte {
		c := struct {
			CallID, ResponseID, ToolName, RawArguments, Args string
			Status                                           call.Status
			Rev                                              uint64
			Request                                          call.Request
			Batch                                            call.Batch
			Approval                                         string
			Seals                                            []call.Seal
		}{e.CallID, e.ResponseID, e.ToolName, e.RawArguments, seal.ArgsHash(e.Arguments), e.Status, e.ToolRevision,
			e.Request, e.Batch, seal.ApprovalOf(e.Approval), e.Seals}
		if len(c.Request.Roles) == 0 {
			c.Request.Roles = nil
		}
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	return bytes.Equal(covered(a), covered(b))
}
