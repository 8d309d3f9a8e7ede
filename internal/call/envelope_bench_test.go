package call

import (
	"encoding/json"
	"testing"
	"time"
)

// benchEnvelope is a valid call as execute receives it: six history steps
// and five seals, the envelope at its largest on a valid call's path.
func benchEnvelope() Envelope {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	e := New("chatcmpl-9xYz0123456789", 0, at)
	e.Provider, e.Model, e.ProviderCallID = "openai-chat", "gpt-4o-2024-08-06", "call_abc123DEF456"
	e.ToolName, e.ToolRevision, e.FinishReason = "create_invoice", 3, "tool_calls"
	e.RawArguments = `{"customer_id":"cus_1234","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":4900}]}`
	e.Arguments = json.RawMessage(e.RawArguments)
	e.IdempotencyKey = "idem-" + e.CallID
	e.Request = Request{Tenant: "acme", Principal: "user-42", Roles: []string{"billing"}, Identity: IdentityUnverified}
	for _, st := range []struct {
		stage string
		to    Status
	}{{"parse", Parsed}, {"validate", Validated}, {"business", BusinessValid}, {"policy", Approved}} {
		if err := e.Move(st.stage, st.to, at); err != nil {
			panic(err)
		}
		e.Seals = append(e.Seals, Seal{Stage: st.stage, Status: st.to, Call: e.CallID, Tool: e.ToolName,
			Raw:  "3f5a0c1d2e4b6a7988776655443322110ffeeddccbbaa99887766554433221100",
			Args: "aa5a0c1d2e4b6a7988776655443322110ffeeddccbbaa99887766554433221100",
			Rev:  3, Key: "k1", MAC: "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4"})
	}
	return e
}

func BenchmarkEnvelope_Marshal(b *testing.B) {
	e := benchEnvelope()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEnvelope_Unmarshal(b *testing.B) {
	e := benchEnvelope()
	data, err := e.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Unmarshal(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEnvelope_MarshalHop(b *testing.B) {
	e := benchEnvelope()
	b.ReportAllocs()
	for b.Loop() {
		_ = e.MarshalHop()
	}
}

func BenchmarkEnvelope_UnmarshalHop(b *testing.B) {
	e := benchEnvelope()
	data := e.MarshalHop()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Unmarshal(data); err != nil {
			b.Fatal(err)
		}
	}
}
