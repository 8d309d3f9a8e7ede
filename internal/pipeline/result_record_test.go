package pipeline

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/streams"
)

// endedCall is a call moved through steps (stage, status) from received,
// as the gates move it.
func endedCall(t *testing.T, steps ...any) call.Envelope {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := call.New("resp-end", 0, at)
	e.Provider, e.Model, e.ToolName, e.RawArguments = "openai-chat", "gpt-4o", "create_invoice", `{"amount":3}`
	e.IdempotencyKey, e.ToolRevision = "idem-1", 7
	e.Request.Identity = call.IdentityVerified
	for i := 0; i+1 < len(steps); i += 2 {
		if err := e.Move(steps[i].(string), steps[i+1].(call.Status), at); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// A call that ends having written no status record before writes none: its
// result is its record (issue 30). Every way a record was written before
// keeps the final one, so the earlier record never says the call still
// waits: each case is a separate envelope as the stages leave it.
func TestOutputs_writes_the_final_record_only_when_an_earlier_hop_wrote_one(t *testing.T) {
	registered := func(n string) bool { return n == "create_invoice" }
	valid := []any{"parse", call.Parsed, "validate", call.Validated, "business", call.BusinessValid, "policy", call.Approved, "execute", call.Executed}
	cases := []struct {
		name   string
		stage  string
		e      func() call.Envelope
		record bool
	}{
		{"valid, executed", "execute", func() call.Envelope { return endedCall(t, valid...) }, false},
		{"dry run at policy", "policy", func() call.Envelope {
			return endedCall(t, "parse", call.Parsed, "validate", call.Validated, "business", call.BusinessValid, "policy", call.DryRun)
		}, false},
		{"policy rejected", "policy", func() call.Envelope {
			return endedCall(t, "parse", call.Parsed, "validate", call.Validated, "business", call.BusinessValid, "policy", call.PolicyRejected)
		}, false},
		{"execution failed", "execute", func() call.Envelope {
			return endedCall(t, "parse", call.Parsed, "validate", call.Validated, "business", call.BusinessValid, "policy", call.Approved, "execute", call.ExecutionFailed)
		}, false},
		{"failed at the repair gate, first hop there", "repair", func() call.Envelope {
			return endedCall(t, "parse", call.Parsed, "validate", call.SchemaInvalid, "repair", call.Failed)
		}, false},
		{"waited for approval", "execute", func() call.Envelope {
			return endedCall(t, "parse", call.Parsed, "validate", call.Validated, "business", call.BusinessValid, "policy", call.ApprovalRequired, "policy", call.Approved, "execute", call.Executed)
		}, true},
		{"denied after an approval wait", "policy", func() call.Envelope {
			return endedCall(t, "parse", call.Parsed, "validate", call.Validated, "business", call.BusinessValid, "policy", call.ApprovalRequired, "policy", call.ApprovalDenied)
		}, true},
		{"repaired", "execute", func() call.Envelope {
			e := endedCall(t, "parse", call.InvalidJSON, "repair", call.Repairing, "repair", call.Received, "parse", call.Parsed, "validate", call.Validated,
				"business", call.BusinessValid, "policy", call.Approved, "execute", call.Executed)
			e.RepairAttempts = 1
			return e
		}, true},
		{"a repair step in its history, no attempt counted", "execute", func() call.Envelope {
			return endedCall(t, "parse", call.InvalidJSON, "repair", call.Repairing, "repair", call.Received, "parse", call.Parsed, "validate", call.Validated,
				"business", call.BusinessValid, "policy", call.Approved, "execute", call.Executed)
		}, true},
		{"replayed", "execute", func() call.Envelope {
			e := endedCall(t, valid...)
			e.Replays = 1
			return e
		}, true},
		{"a stage's retry wait", "execute", func() call.Envelope {
			e := endedCall(t, "parse", call.Parsed, "validate", call.Validated, "business", call.BusinessValid, "policy", call.Approved)
			e.History = append(e.History, WaitStep("execute", call.Approved, Wait{Stage: "execute", For: WaitExecutor, Attempt: 1, Of: 5}, time.Now()))
			if err := e.Move("execute", call.Executed, time.Now()); err != nil {
				t.Fatal(err)
			}
			return e
		}, true},
		{"outcome unknown", "execute", func() call.Envelope {
			return endedCall(t, "parse", call.Parsed, "validate", call.Validated, "business", call.BusinessValid, "policy", call.Approved, "execute", call.OutcomeUnknown)
		}, true},
		{"an unregistered tool (records hash its name, results do not)", "repair", func() call.Envelope {
			e := endedCall(t, "parse", call.Parsed, "validate", call.NoSuchTool, "repair", call.Failed)
			e.ToolName = "no_such_thing"
			return e
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := c.e()
			outs, err := (&Emitter{Registered: registered}).Outputs(c.stage, e)
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Contains(subjects(outs), streams.CallStatus(e.CallID))
			if got != c.record {
				t.Fatalf("writes the status record: %v, want %v; outputs %v", got, c.record, subjects(outs))
			}
			if !slices.ContainsFunc(subjects(outs), func(s string) bool { return s == streams.Results(e.Request.Tenant, e.ResponseID) }) {
				t.Fatalf("no result; outputs %v", subjects(outs))
			}
		})
	}
}

// The result carries the record's fields, as the record shows them, so it
// can stand for the record: never the raw arguments, their hash.
func TestResult_carries_the_record_fields(t *testing.T) {
	e := endedCall(t, "parse", call.Parsed, "validate", call.Validated, "business", call.BusinessValid, "policy", call.Approved, "execute", call.Executed)
	res := (&Emitter{}).ResultOf(e)
	rec := StatusOf(e)
	if res.Model != rec.Model || res.Identity != rec.Identity || res.ToolRevision != rec.ToolRevision || res.ArgumentsHash != rec.ArgumentsHash ||
		res.IdempotencyKey != rec.IdempotencyKey || res.Replays != rec.Replays {
		t.Fatalf("result %+v\nrecord %+v", res, rec)
	}
	if res.ArgumentsHash != redact.Hash([]byte(e.RawArguments)) || res.Identity != call.IdentityVerified || res.Model != "gpt-4o" || res.ToolRevision != 7 {
		t.Fatalf("result record fields %+v", res)
	}
	data, _ := json.Marshal(res)
	if bytes.Contains(data, []byte(`"amount":3`)) {
		t.Fatalf("the result holds the raw arguments: %s", data)
	}
}
