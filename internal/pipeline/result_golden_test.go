package pipeline

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
)

// The JSON on toolgate.results.<response-id> is the public contract
// (pkg/wire): the bytes of a result stay what they were.
func TestResult_json_is_byte_identical(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := Result{
		CallID: "r1:0", ResponseID: "r1", ProviderCallID: "c1", Provider: "openai-chat", Tool: "t",
		Status: call.Failed, Failure: call.SchemaInvalid, OK: false, Errors: []string{"e1"},
		Result: json.RawMessage(`{"a":1}`), RepairAttempts: 2, Source: "native", Text: "x",
		Message: json.RawMessage(`{"role":"tool"}`), History: []call.Step{{Stage: "parse", Status: call.Parsed, At: at, Note: "n"}},
	}
	const want = `{"call_id":"r1:0","response_id":"r1","provider_call_id":"c1","provider":"openai-chat","tool":"t","status":"failed","failure":"schema_invalid","ok":false,"errors":["e1"],"result":{"a":1},"repair_attempts":2,"source":"native","text":"x","message":{"role":"tool"},"history":[{"stage":"parse","status":"parsed","at":"2026-01-02T03:04:05Z","note":"n"}]}`
	if got, err := json.Marshal(r); err != nil || string(got) != want {
		t.Fatalf("got %s (%v)\nwant %s", got, err, want)
	}
	const empty = `{"call_id":"","response_id":"","provider":"","tool":"","status":"","ok":false,"repair_attempts":0,"source":"","text":"","message":null,"history":null}`
	if got, err := json.Marshal(Result{}); err != nil || string(got) != empty {
		t.Fatalf("got %s (%v)\nwant %s", got, err, empty)
	}
}
