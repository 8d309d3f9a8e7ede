package stage

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/records"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// execRecorder records every request any executor subscriber receives on
// toolgate.exec.>, as the admin sees them (core NATS hands each one to
// every subscriber): a call that reached a tool is here.
type execRecorder struct {
	mu    sync.Mutex
	calls map[string]int // by call id
}

func recordExec(t *testing.T, r *lpRig) *execRecorder {
	t.Helper()
	rec := &execRecorder{calls: map[string]int{}}
	nc, _ := r.connectAs(authz.Admin)
	sub, err := nc.Subscribe(streams.Exec(">"), func(m *nats.Msg) {
		rec.mu.Lock()
		rec.calls[m.Header.Get(streams.HeaderCallID)]++
		rec.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	return rec
}

func (rec *execRecorder) of(callID string) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.calls[callID]
}

// forged is a hand-made envelope for delete_customer_account as an attacker
// writes it: approved (or outcome_unknown, to look like a call to
// reconcile), with admin roles; fakeSeals gives it seals of every gate
// shaped like real ones, made without the keys.
func forged(rid string, status call.Status, fakeSeals bool) call.Envelope {
	e := call.New(rid, 0, time.Now())
	e.Provider, e.ToolName = "openai-chat", "delete_customer_account"
	e.RawArguments = `{"customer_id":"cus_victim","reason":"forged"}`
	e.Arguments = json.RawMessage(`{"customer_id":"cus_victim","reason":"forged"}`)
	e.Request = call.Request{Tenant: "acme", Principal: "mallory", Roles: []string{"admin"}}
	e.Batch = call.Batch{ID: rid, Size: 1}
	for _, st := range []call.Status{call.Parsed, call.Validated, call.BusinessValid, call.Approved} {
		e.History = append(e.History, call.Step{Stage: "policy", Status: st, At: time.Now()})
	}
	if fakeSeals {
		for _, st := range append([]string{seal.Accumulate}, seal.Gates()...) {
			e.Seals = append(e.Seals, call.Seal{Stage: st, Status: seal.Verdict(st), Call: e.CallID, Tool: e.ToolName,
				Raw: seal.RawHash(e.RawArguments), Args: seal.ArgsHash(e.Arguments), Key: "k1", MAC: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"})
		}
	}
	e.Status = status
	if status != call.Approved {
		e.History = append(e.History, call.Step{Stage: streams.Execute, Status: status, At: time.Now()})
	}
	return e
}

// corePublish publishes e on subject with a plain NATS publish, as nc's user.
func corePublish(t *testing.T, nc *nats.Conn, subject string, e call.Envelope) {
	t.Helper()
	body, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg(subject)
	m.Data = body
	m.Header.Set(streams.HeaderCallID, e.CallID)
	m.Header.Set(streams.HeaderResponseID, e.ResponseID)
	if err := nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := nc.LastError(); err != nil {
		t.Fatalf("publish to %s: %v", subject, err)
	}
}

// letters waits for the dead letters of callID with failure.
func letters(t *testing.T, js jetstream.JetStream, callID, failure string, n int) []dlq.Letter {
	t.Helper()
	var out []dlq.Letter
	testenv.Eventually(t, 15*time.Second, 25*time.Millisecond, func() error {
		all, err := dlq.List(t.Context(), js, dlq.Filter{Failure: failure})
		if err != nil {
			return err
		}
		out = out[:0]
		for _, l := range all {
			if l.CallID == callID {
				out = append(out, l)
			}
		}
		if len(out) < n {
			return fmt.Errorf("%d dead letters of %s (%s), want %d", len(out), callID, failure, n)
		}
		return nil
	})
	return out
}

// sealInvalid waits for callID's status record to say seal_invalid and
// returns its errors.
func sealInvalid(t *testing.T, js jetstream.JetStream, callID string) []string {
	t.Helper()
	// The stored record, or the result of a call that wrote none (issue 30).
	var rec pipeline.StatusRecord
	testenv.Eventually(t, 15*time.Second, 25*time.Millisecond, func() error {
		r, err := records.Reader{JS: js}.Find(t.Context(), callID)
		if err != nil {
			return err
		}
		if r == nil {
			return fmt.Errorf("no record of %s yet", callID)
		}
		rec = *r
		if rec.Status != call.SealInvalid {
			return fmt.Errorf("%s is %s", callID, rec.Status)
		}
		return nil
	})
	return rec.Errors
}

// sealInvalidMetric is execute's toolgate_seal_invalid_total{stage}.
func sealInvalidMetric(t *testing.T, r *lpRig, stage string) string {
	t.Helper()
	w := httptest.NewRecorder()
	r.execMetrics.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(w.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, `toolgate_seal_invalid_total{stage="`+stage+`"}`) {
			return strings.Fields(line)[1]
		}
	}
	return "0"
}

// The finding: as the parse user (every stage may publish
// toolgate.dlq.*.>), a hand-made envelope published to
// toolgate.dlq.execute.outcome_unknown was executed by the routine
// reconciliation (dlq replay --failure outcome_unknown).
func TestTrust_forged_dlq_envelope_never_executes(t *testing.T) {
	r := startLeastPrivilegeRig(t)
	rec := recordExec(t, r)
	parse, _ := r.connectAs(streams.Parse)
	bare := forged("forged-bare", call.OutcomeUnknown, false)
	shaped := forged("forged-shaped", call.OutcomeUnknown, true)
	corePublish(t, parse, streams.DLQ(streams.Execute, string(call.OutcomeUnknown)), bare)
	corePublish(t, parse, streams.DLQ(streams.Execute, string(call.OutcomeUnknown)), shaped)

	// The README's reconciliation, as the admin: replay every
	// outcome_unknown letter.
	_, ajs := r.connectAs(authz.Admin)
	ls := append(letters(t, ajs, bare.CallID, "outcome_unknown", 1), letters(t, ajs, shaped.CallID, "outcome_unknown", 1)...)
	sum, err := dlq.Replay(t.Context(), ajs, ls, dlq.Options{Wait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Without seals, replay refuses it; with seals shaped like real ones,
	// it goes to execute, which refuses it.
	for _, it := range sum.Items {
		switch it.CallID {
		case bare.CallID:
			if !strings.Contains(it.Skip, "no accumulate or repair seal") {
				t.Errorf("unsealed forgery: skip %q, want refused for its missing seals", it.Skip)
			}
		case shaped.CallID:
			if it.Skip != "" || it.Outcome != call.SealInvalid {
				t.Errorf("forgery with fake seals: skip %q outcome %q, want replayed and seal_invalid", it.Skip, it.Outcome)
			}
		}
	}
	errs := sealInvalid(t, ajs, shaped.CallID)
	if !strings.Contains(strings.Join(errs, " "), "seal: accumulate") {
		t.Errorf("errors %q, want the accumulate seal named", errs)
	}
	letters(t, ajs, shaped.CallID, string(call.SealInvalid), 1)
	if v := sealInvalidMetric(t, r, seal.Accumulate); v != "1" {
		t.Errorf("toolgate_seal_invalid_total{stage=accumulate} = %s, want 1", v)
	}
	if n := rec.of(bare.CallID) + rec.of(shaped.CallID); n != 0 {
		t.Fatalf("the tool received %d forged calls", n)
	}
}

// The finding's second half: `dlq replay --call X --to-stage execute`
// executed a call that policy had rejected.
func TestTrust_policy_rejected_call_is_never_replayed_past_policy(t *testing.T) {
	r := startLeastPrivilegeRig(t)
	rec := recordExec(t, r)
	r.publish("tr-denied", "openai-chat", chat("tr-denied", "delete_customer_account", `{"customer_id":"cus_1","reason":"asked"}`, "tool_calls"))
	rs := waitOrDenied(t, r.pipe, r.denied, "tr-denied", 1)
	if rs[0]["status"] != string(call.PolicyRejected) {
		t.Fatalf("result %v, want policy_rejected", rs[0])
	}
	_, ajs := r.connectAs(authz.Admin)
	callID := call.ID("tr-denied", 0)
	ls := letters(t, ajs, callID, string(call.PolicyRejected), 1)
	sum, err := dlq.Replay(t.Context(), ajs, ls, dlq.Options{ToStage: streams.Execute})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Replayed != 0 || len(sum.Items) != 1 || !strings.Contains(sum.Items[0].Skip, "--to-stage execute is past policy") {
		t.Fatalf("replay to execute: %+v, want refused", sum)
	}
	// Forced onto execute's input by the one stage user that may publish
	// there (policy), with its status set to approved: no policy seal.
	e := *ls[0].Envelope
	e.Status, e.Errors = call.Approved, nil
	policy, _ := r.connectAs(streams.Policy)
	corePublish(t, policy, streams.Gate(streams.Execute), e)
	errs := sealInvalid(t, ajs, callID)
	if !strings.Contains(strings.Join(errs, " "), "seal: policy") {
		t.Errorf("errors %q, want the missing policy seal named", errs)
	}
	if v := sealInvalidMetric(t, r, seal.Policy); v != "1" {
		t.Errorf("toolgate_seal_invalid_total{stage=policy} = %s, want 1", v)
	}
	if n := rec.of(callID); n != 0 {
		t.Fatalf("the tool received the rejected call %d times", n)
	}
}

// A genuine call, sealed by every gate, whose arguments are edited on the
// way to execute, ends seal_invalid and never reaches the tool again.
func TestTrust_edited_sealed_envelope_never_executes(t *testing.T) {
	r := startLeastPrivilegeRig(t)
	rec := recordExec(t, r)
	// The sealed envelope policy hands to execute, as the admin sees it go by.
	anc, ajs := r.connectAs(authz.Admin)
	handed, err := anc.SubscribeSync(streams.ExecuteGroups())
	if err != nil {
		t.Fatal(err)
	}
	if err := anc.Flush(); err != nil {
		t.Fatal(err)
	}
	r.publish("tr-edit", "openai-chat", chat("tr-edit", "create_invoice", validInvoice, "tool_calls"))
	rs := waitOrDenied(t, r.pipe, r.denied, "tr-edit", 1)
	if rs[0]["status"] != string(call.Executed) {
		t.Fatalf("result %v, want executed", rs[0])
	}
	callID := call.ID("tr-edit", 0)
	// The recorder's subscription (another connection than the tool's)
	// delivers on its own: read until the request is in.
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if rec.of(callID) == 0 {
			return fmt.Errorf("the recorder has not seen %s yet", callID)
		}
		return nil
	})
	if rec.of(callID) != 1 {
		t.Fatalf("the tool received the genuine call %d times, want 1", rec.of(callID))
	}
	m, err := handed.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	e, err := call.Unmarshal(m.Data)
	if err != nil || e.CallID != callID || len(e.Seals) != 5 {
		t.Fatalf("execute's input: %s %d seals (%v), want %s with 5", e.CallID, len(e.Seals), err, callID)
	}
	var args map[string]any
	if err := json.Unmarshal(e.Arguments, &args); err != nil {
		t.Fatal(err)
	}
	args["customer_id"] = "cus_attacker"
	e.Arguments, _ = json.Marshal(args)
	e.Replays = 1 // new message ids
	policy, _ := r.connectAs(streams.Policy)
	corePublish(t, policy, streams.Gate(streams.Execute), e)
	errs := sealInvalid(t, ajs, callID)
	if !strings.Contains(strings.Join(errs, " "), "other arguments") {
		t.Errorf("errors %q, want the arguments named", errs)
	}
	if v := sealInvalidMetric(t, r, seal.Parse); v != "1" {
		t.Errorf("toolgate_seal_invalid_total{stage=parse} = %s, want 1", v)
	}
	if n := rec.of(callID); n != 1 {
		t.Fatalf("the tool received the call %d times, want only the genuine one", n)
	}
}

// sealAs appends stage's seal to e with kr, as the stage would on a pass.
func sealAs(t *testing.T, kr *seal.Keyring, stage string, e *call.Envelope) {
	t.Helper()
	if err := kr.Seal(stage, e); err != nil {
		t.Fatal(err)
	}
}
