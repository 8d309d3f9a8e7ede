package pipeline

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

const (
	apiKey = "sk-proj-AbCdEfGhIjKlMnOpQrSt123"
	card   = "4111111111111111"
)

// secretCall is a schema-invalid call whose arguments carry an API key, a
// card number and a field the tool marks sensitive.
func secretCall(t *testing.T) call.Envelope {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := call.New("resp-secret", 0, at)
	e.Provider, e.Model, e.ToolName, e.FinishReason = "openai-chat", "gpt-4o", "charge", "tool_calls"
	e.RawArguments = `{"api_key":"` + apiKey + `","card":"` + card + `","iban":"DE89370400440532013000","note":"pay ` + card + `"}`
	for _, m := range []struct {
		stage string
		to    call.Status
		errs  []string
	}{
		{"parse", call.Parsed, nil},
		{"validate", call.SchemaInvalid, []string{"/card: " + card + " is not valid under the schema; key " + apiKey}},
		{"repair", call.Failed, nil},
	} {
		if err := e.Move(m.stage, m.to, at, m.errs...); err != nil {
			t.Fatal(err)
		}
	}
	e.Failure = call.SchemaInvalid
	e.Errors = []string{"/card: " + card + " is not valid under the schema; key " + apiKey}
	return e
}

func TestAuditOf_failed_call_holds_hash_and_redacted_arguments_never_the_secrets(t *testing.T) {
	e := secretCall(t)
	ev := AuditOf("repair", e, []string{"iban"})
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	for _, secret := range []string{apiKey, card, "4111 1111", "DE89370400440532013000"} {
		if strings.Contains(out, secret) {
			t.Errorf("audit event contains %q: %s", secret, out)
		}
	}
	if ev.EventType != EventFailed || ev.FailureType != "schema_invalid" || ev.Status != call.Failed {
		t.Errorf("event type %q failure %q status %q, want tool_call_failed / schema_invalid / failed", ev.EventType, ev.FailureType, ev.Status)
	}
	if ev.RawArgumentsHash != redact.Hash([]byte(e.RawArguments)) || !strings.HasPrefix(ev.RawArgumentsHash, "sha256:") {
		t.Errorf("hash %q is not the sha256 of the raw arguments", ev.RawArgumentsHash)
	}
	if !strings.Contains(ev.RawArgumentsRedacted, redact.Placeholder) || !strings.Contains(ev.RawArgumentsRedacted, `"note"`) {
		t.Errorf("redacted arguments %q lost their shape or masked nothing", ev.RawArgumentsRedacted)
	}
	if ev.TraceID != "resp-secret" || ev.CallID != "resp-secret-0" || ev.ModelID != "gpt-4o" || ev.FinishReason != "tool_calls" || ev.Stage != "repair" {
		t.Errorf("provenance fields wrong: %+v", ev)
	}
	if !ev.OccurredAt.Equal(e.History[len(e.History)-1].At) {
		t.Errorf("occurred_at %v, want the time of the last transition", ev.OccurredAt)
	}
}

// A terminal call's result carries its audit event, redacted (issue 30:
// one stored message ends a call), and nothing goes to toolgate.audit.> by
// default; with AuditStream (--audit-stream) the same event goes there too.
func TestOutputs_terminal_call_carries_its_audit_in_the_result_and_keeps_raw_in_the_dlq(t *testing.T) {
	var seen []string
	em := &Emitter{
		Transition: func(stage string, e call.Envelope) { seen = append(seen, stage+":"+string(e.Status)) },
		Sensitive:  func(tool string) []string { return map[string][]string{"charge": {"iban"}}[tool] },
	}
	e := secretCall(t)
	outs, err := em.Outputs("repair", e)
	if err != nil {
		t.Fatal(err)
	}
	var dlq []byte
	for _, o := range outs {
		switch {
		case strings.HasPrefix(o.Subject, "toolgate.audit."):
			t.Errorf("audit event published on %s without the option: it rides in the result", o.Subject)
		case o.Subject == streams.DLQ("validate", "schema_invalid"):
			dlq = o.Data
		}
	}
	r := resultOut(t, outs)
	if r.Audit == nil || dlq == nil {
		t.Fatalf("outputs %v: result audit %v, dead letter %d bytes; want both", subjects(outs), r.Audit, len(dlq))
	}
	audit, _ := json.Marshal(r.Audit)
	for _, secret := range []string{"DE89370400440532013000", apiKey, card} {
		if strings.Contains(string(audit), secret) {
			t.Errorf("the result's audit event holds %q: %s", secret, audit)
		}
	}
	if r.Audit.RawArgumentsHash != redact.Hash([]byte(e.RawArguments)) || r.Audit.EventType != EventFailed ||
		r.Audit.FailureType != "schema_invalid" || r.Audit.Stage != "repair" || r.Audit.CallID != e.CallID {
		t.Errorf("the result's audit event is not the call's: %s", audit)
	}
	if !strings.Contains(r.Audit.RawArgumentsRedacted, redact.Placeholder) {
		t.Errorf("redacted arguments %q masked nothing", r.Audit.RawArgumentsRedacted)
	}
	if !strings.Contains(string(dlq), apiKey) || !strings.Contains(string(dlq), card) {
		t.Error("the dead letter does not keep the raw arguments")
	}
	if len(seen) != 1 || seen[0] != "repair:failed" {
		t.Errorf("hook saw %v, want one repair:failed transition", seen)
	}

	// --audit-stream: the same event on toolgate.audit.<status> too.
	em.AuditStream = true
	outs, err = em.Outputs("repair", e)
	if err != nil {
		t.Fatal(err)
	}
	var streamed []byte
	for _, o := range outs {
		if o.Subject == streams.Audit("failed") {
			streamed = o.Data
		}
	}
	var ev AuditEvent
	if streamed == nil || json.Unmarshal(streamed, &ev) != nil {
		t.Fatalf("with AuditStream: outputs %v lack the audit event", subjects(outs))
	}
	if got := resultOut(t, outs).Audit; got == nil || !reflect.DeepEqual(*got, ev) {
		t.Errorf("the streamed event %+v differs from the result's %+v", ev, got)
	}

	next := call.New("resp-ok", 0, time.Now())
	outs, err = em.Outputs("accumulate", next)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if strings.HasPrefix(o.Subject, "toolgate.audit.") || strings.HasPrefix(o.Subject, "toolgate.results.") {
			t.Errorf("non-terminal transition published %s", o.Subject)
		}
	}
	if len(seen) != 3 {
		t.Errorf("hook saw %d transitions, want 3", len(seen))
	}
}

func TestAuditOf_executed_call_is_an_executed_event_without_failure(t *testing.T) {
	e := call.New("r", 1, time.Now())
	e.Status, e.ToolName, e.RawArguments = call.Executed, "get_weather", `{"city":"Paris"}`
	ev := AuditOf("execute", e, nil)
	if ev.EventType != EventExecuted || ev.FailureType != "" {
		t.Errorf("event %q failure %q, want tool_call_executed and no failure", ev.EventType, ev.FailureType)
	}
	if ev.RawArgumentsRedacted != `{"city":"Paris"}` {
		t.Errorf("harmless arguments changed: %s", ev.RawArgumentsRedacted)
	}
}

func subjects(outs []worker.Output) []string {
	var s []string
	for _, o := range outs {
		s = append(s, o.Subject)
	}
	return s
}
