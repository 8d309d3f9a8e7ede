package wire

import (
	"errors"
	"testing"
)

// mcpMeta is the _meta of sigReq's tools/call signed with testKey(1).
func mcpMeta(t *testing.T) map[string]any {
	t.Helper()
	r := sigReq()
	h, err := SignExec(r, sigAt, testKey(1))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{MCPMetaCallID: r.CallID, MCPMetaIdempotencyKey: r.IdempotencyKey, MCPMetaSignature: h}
}

func TestVerifyMCP_genuine_and_hostile_meta(t *testing.T) {
	r := sigReq()
	got, err := VerifyMCP(mcpMeta(t), r.Tool, "", r.Body, sigAt, 0, pub(testKey(1)))
	if err != nil || got.IdempotencyKey != r.IdempotencyKey || got.CallID != r.CallID {
		t.Fatalf("genuine: %+v, %v", got, err)
	}
	for _, c := range []struct {
		name  string
		edit  func(m map[string]any) map[string]any
		query string
		want  error
	}{
		{"nil meta", func(map[string]any) map[string]any { return nil }, "", ErrExecUnsigned},
		{"no signature", func(m map[string]any) map[string]any { delete(m, MCPMetaSignature); return m }, "", ErrExecUnsigned},
		{"signature a number", func(m map[string]any) map[string]any { m[MCPMetaSignature] = 7.0; return m }, "", ErrExecMalformed},
		{"key missing", func(m map[string]any) map[string]any { delete(m, MCPMetaIdempotencyKey); return m }, "", ErrExecMalformed},
		{"call id an object", func(m map[string]any) map[string]any { m[MCPMetaCallID] = map[string]any{}; return m }, "", ErrExecMalformed},
		{"key altered", func(m map[string]any) map[string]any { m[MCPMetaIdempotencyKey] = "other"; return m }, "", ErrExecInvalid},
		{"verified as a status query", func(m map[string]any) map[string]any { return m }, QueryStatus, ErrExecInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := VerifyMCP(c.edit(mcpMeta(t)), r.Tool, c.query, r.Body, sigAt, 0, pub(testKey(1)))
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if m := MCPRefusedMeta(err); m[MCPMetaSignatureRefused] != RefusedReason(err) {
				t.Fatalf("refused meta %v", m)
			}
		})
	}
}
