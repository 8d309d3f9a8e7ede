package stage

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/records"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// seedTools are the seed article's other examples, beside examples/tools.yaml:
// create_invoice with a schema that forgot minItems (so the business rule
// catches an empty invoice), and loosely typed tools whose values only the
// business gate can judge.
const seedTools = `
tools:
  - name: create_invoice_lenient
    input_schema:
      type: object
      properties:
        customer_id: {type: string}
        currency: {type: string, enum: [USD, EUR, GBP]}
        line_items: {type: array, items: {type: object}}
      required: [customer_id, currency, line_items]
    rules:
      - {expr: "args.line_items.size() > 0", message: At least one line item is required.}
    policy: {risk: write}
  - name: cancel_subscription
    input_schema:
      type: object
      properties: {date: {type: string}, action: {type: string}, customer_id: {type: string}}
      required: [date, action, customer_id]
    policy: {risk: write}
  - name: send_followup
    input_schema:
      type: object
      properties:
        email: {type: string}
        date: {type: string}
        reason: {type: string}
        amount: {description: amount in cents, if any}
    policy: {risk: write}
  - name: preview_refund
    input_schema: {type: object, properties: {amount: {type: integer}}, required: [amount]}
    policy: {risk: write, dry_run: true}
`

// executions records every executor call by tool, with its arguments.
type executions struct {
	mu   sync.Mutex
	args map[string][]string
}

func (x *executions) add(tool string, args []byte) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.args[tool] = append(x.args[tool], string(args))
}

func (x *executions) of(tool string) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]string(nil), x.args[tool]...)
}

// startGatedPipeline is startPipeline with the seed's extra tools, an
// executor for every tool, and the approval settings given.
func startGatedPipeline(t *testing.T, ttl, sweep time.Duration) (*pipe, *executions, *approval.Store) {
	t.Helper()
	return startGatedPipelineSealed(t, ttl, sweep, nil)
}

// startGatedPipelineSealed is startGatedPipeline with the stages' seal keys
// given (nil: their own), so a test can seal what it hands a gate.
func startGatedPipelineSealed(t *testing.T, ttl, sweep time.Duration, seals *seal.Keyring) (*pipe, *executions, *approval.Store) {
	t.Helper()
	ex := &executions{args: map[string][]string{}}
	files := map[string][]byte{"tools.yaml": exampleTools(t), "seed.yaml": []byte(seedTools)}
	var names []string
	for file, src := range files {
		defs, err := tool.Load(file, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range defs {
			names = append(names, d.Name)
		}
	}
	p := startRig(t, rig{
		files: files,
		serve: names,
		exec: func(name string, c toolserver.Call) (any, error) {
			ex.add(name, c.Arguments)
			return map[string]any{"done": name, "call": c.ID}, nil
		},
		configure: func(c *Config) { c.ApprovalTTL, c.ApprovalSweep, c.Seals = ttl, sweep, seals },
	})
	akv, err := p.js.KeyValue(p.ctx, streams.BucketApprovals)
	if err != nil {
		t.Fatal(err)
	}
	return p, ex, approval.NewStore(akv)
}

// publishAs publishes one chat completion calling tool with args, from a
// caller with roles.
func (p *pipe) publishAs(rid, tool, args, principal, roles string, extra ...string) {
	p.t.Helper()
	h := []string{streams.HeaderPrincipal, principal}
	if roles != "" {
		h = append(h, streams.HeaderRoles, roles)
	}
	p.publish(rid, "openai-chat", chat(rid, tool, args, "tool_calls"), append(h, extra...)...)
}

// waitStatus waits until the call's status record says want.
func (p *pipe) waitStatus(callID string, want call.Status) pipeline.StatusRecord {
	p.t.Helper()
	var rec pipeline.StatusRecord
	testenv.Eventually(p.t, 15*time.Second, 20*time.Millisecond, func() error {
		// The stored record, or the result of a call that wrote none
		// (issue 30).
		r, err := records.Reader{JS: p.js}.Find(p.ctx, callID)
		if err != nil {
			return err
		}
		if r == nil {
			return fmt.Errorf("no record of %s yet", callID)
		}
		if rec = *r; rec.Status != want {
			return fmt.Errorf("call %s is %s, want %s", callID, rec.Status, want)
		}
		return nil
	})
	return rec
}

// settled waits until the policy stage has nothing pending or unacked.
func (p *pipe) settled(stage string) {
	p.t.Helper()
	testenv.Eventually(p.t, 10*time.Second, 20*time.Millisecond, func() error {
		return testenv.ConsumerIdle(p.ctx, p.js, streams.StreamOf(stage), stage)
	})
}

// decide is what `toolgate approve|deny` does.
func decide(t *testing.T, p *pipe, store *approval.Store, callID string, state approval.State, by, reason string) {
	t.Helper()
	rec, rev, err := store.Decide(p.ctx, callID, state, by, reason, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Resume(p.ctx, p.js, rec, rev); err != nil {
		t.Fatal(err)
	}
}

func notes(rec pipeline.StatusRecord) string {
	var s []string
	for _, h := range rec.History {
		s = append(s, h.Stage+":"+string(h.Status)+" "+h.Note)
	}
	return strings.Join(s, " | ")
}

func hugeInvoice() string {
	return `{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"FLEET","quantity":1,"price_cents":100000001}]}`
}

const deleteArgs = `{"customer_id":"cus_9821","reason":"customer asked to close the account"}`

func TestPipeline_seed_cases_end_where_the_seed_says(t *testing.T) {
	p, ex, store := startGatedPipeline(t, 0, 0)
	for _, c := range []struct {
		name, tool, args, roles string
		status, failure         string   // result status (and failure for failed)
		errs                    []string // substrings of the errors
	}{
		{"empty_line_items_schema_min_items", "create_invoice", `{"customer_id":"cus_9821","currency":"USD","line_items":[]}`, "",
			"failed", "schema_invalid", []string{"line_items"}},
		{"empty_line_items_schema_allows_it", "create_invoice_lenient", `{"customer_id":"cus_9821","currency":"USD","line_items":[]}`, "",
			"business_invalid", "", []string{"At least one line item is required."}},
		{"date_soon", "cancel_subscription", `{"date":"soon","action":"cancel_subscription","customer_id":"cus_9821"}`, "",
			"business_invalid", "", []string{"date", "give the real value"}},
		{"email_todo_date_asap_amount_null", "send_followup", `{"email":"TODO","date":"ASAP","reason":"user said they want the thing","amount":null}`, "",
			"business_invalid", "", []string{"email", "date", "amount is null: give the real value"}},
		{"delete_by_non_admin", "delete_customer_account", deleteArgs, "support",
			"policy_rejected", "", []string{"may not call delete_customer_account", "'admin' in roles"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rid := "seed-" + strings.ReplaceAll(c.name, "_", "-")
			p.publishAs(rid, c.tool, c.args, "bob", c.roles)
			r := p.waitResults(rid, 1)[0]
			if r["status"] != c.status || (c.failure != "" && r["failure"] != c.failure) {
				t.Fatalf("ended %v/%v, want %s/%s: %v", r["status"], r["failure"], c.status, c.failure, r["errors"])
			}
			errs := fmt.Sprint(r["errors"])
			for _, w := range c.errs {
				if !strings.Contains(errs, w) {
					t.Errorf("errors %s lack %q", errs, w)
				}
			}
			if c.status == "business_invalid" && !strings.Contains(fmt.Sprint(r["text"]), "Ask the user") {
				t.Errorf("result text %q does not ask to clarify", r["text"])
			}
		})
	}
	t.Run("invoice_over_a_million_waits_for_manual_review", func(t *testing.T) {
		p.publishAs("seed-huge", "create_invoice", hugeInvoice(), "bob", "")
		rec := p.waitStatus("seed-huge-0", call.ApprovalRequired)
		if !strings.Contains(notes(rec), "Invoices over $1,000,000 require manual review.") {
			t.Fatalf("history %s does not say why it waits", notes(rec))
		}
		a, _, err := store.Get(p.ctx, "seed-huge-0")
		if err != nil || a.State != approval.Pending || a.Tool != "create_invoice" {
			t.Fatalf("approval record %+v, %v: want pending for create_invoice", a, err)
		}
	})
	t.Run("delete_by_admin_waits_for_approval", func(t *testing.T) {
		p.publishAs("seed-admin", "delete_customer_account", deleteArgs, "alice", "admin")
		p.waitStatus("seed-admin-0", call.ApprovalRequired)
		if len(p.results("seed-admin")) != 0 {
			t.Fatal("a waiting call published a terminal result")
		}
	})
	p.settled(streams.Policy)
	if n := p.executed.Load(); n != 0 {
		t.Fatalf("%d calls executed, want none (%v)", n, ex.args)
	}
}

func TestPipeline_approved_call_executes_once_and_records_the_approver(t *testing.T) {
	p, ex, store := startGatedPipeline(t, 0, 0)
	p.publishAs("appr-ok", "delete_customer_account", deleteArgs, "alice", "admin")
	p.waitStatus("appr-ok-0", call.ApprovalRequired)
	decide(t, p, store, "appr-ok-0", approval.Approved, "carol", "ticket 4711")
	r := p.waitResults("appr-ok", 1)[0]
	if r["status"] != "executed" {
		t.Fatalf("ended %v, want executed: %v", r["status"], r["errors"])
	}
	rec := p.waitStatus("appr-ok-0", call.Executed)
	if h := notes(rec); !strings.Contains(h, "policy:approved approved by carol: ticket 4711") {
		t.Fatalf("history %s does not record the approver and reason", h)
	}
	// The same decision resent (a second `approve`, the sweeper) runs nothing more.
	if _, _, err := store.Decide(p.ctx, "appr-ok-0", approval.Approved, "dave", "", "", time.Now()); err == nil {
		t.Fatal("a decided call was decided again")
	}
	a, rev, _ := store.Get(p.ctx, "appr-ok-0")
	if err := store.Resume(p.ctx, p.js, a, rev); err != nil {
		t.Fatal(err)
	}
	p.settled(streams.Policy)
	p.settled(streams.Execute)
	if got := ex.of("delete_customer_account"); len(got) != 1 {
		t.Fatalf("executed %d times, want once", len(got))
	}
}

func TestPipeline_denied_call_ends_approval_denied_and_is_dead_lettered(t *testing.T) {
	p, _, store := startGatedPipeline(t, 0, 0)
	p.publishAs("appr-no", "delete_customer_account", deleteArgs, "alice", "admin")
	p.waitStatus("appr-no-0", call.ApprovalRequired)
	decide(t, p, store, "appr-no-0", approval.Denied, "carol", "wrong customer")
	r := p.waitResults("appr-no", 1)[0]
	if r["status"] != "approval_denied" || !strings.Contains(fmt.Sprint(r["errors"]), "denied by carol: wrong customer") {
		t.Fatalf("result %v %v, want approval_denied by carol", r["status"], r["errors"])
	}
	testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
		if n := len(p.dlq(streams.DLQ(streams.Policy, "approval_denied"))); n != 1 {
			return fmt.Errorf("%d dead letters", n)
		}
		return nil
	})
	if p.executed.Load() != 0 {
		t.Fatal("a denied call executed")
	}
}

func TestPipeline_undecided_call_expires_without_any_command(t *testing.T) {
	p, _, store := startGatedPipeline(t, 700*time.Millisecond, 100*time.Millisecond)
	p.publishAs("appr-late", "delete_customer_account", deleteArgs, "alice", "admin")
	p.waitStatus("appr-late-0", call.ApprovalRequired)
	r := p.waitResults("appr-late", 1)[0]
	if r["status"] != "approval_expired" {
		t.Fatalf("ended %v, want approval_expired", r["status"])
	}
	a, _, err := store.Get(p.ctx, "appr-late-0")
	if err != nil || a.State != approval.Expired {
		t.Fatalf("record %+v %v, want expired", a, err)
	}
	if _, _, err := store.Decide(p.ctx, "appr-late-0", approval.Approved, "carol", "", "", time.Now()); err == nil {
		t.Fatal("an expired call was approved")
	}
	if len(p.dlqAtLeast(streams.DLQ(streams.Policy, "approval_expired"), 1)) != 1 {
		t.Fatal("no dead letter for the expired call")
	}
	if p.executed.Load() != 0 {
		t.Fatal("an expired call executed")
	}
}

func TestPipeline_approval_does_not_carry_over_to_repaired_arguments(t *testing.T) {
	seals := sealtest.Keys(t)
	p, ex, store := startGatedPipelineSealed(t, 0, 0, seals)
	p.publishAs("appr-fix", "delete_customer_account", deleteArgs, "alice", "admin")
	p.waitStatus("appr-fix-0", call.ApprovalRequired)
	// A human approves what was shown ...
	shown, rev, err := store.Decide(p.ctx, "appr-fix-0", approval.Approved, "carol", "checked", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// ... while a repair sends the call through the gates again with other
	// arguments (a new attempt: new message ids, same call id).
	e, err := call.Unmarshal(shown.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	changed := `{"customer_id":"cus_0001","reason":"customer asked to close the account"}`
	e.RepairAttempts++
	e.RawArguments, e.Arguments = changed, nil
	e.Reset(streams.Repair, call.Received, time.Now(), "repaired")
	sealAs(t, seals, streams.Repair, &e) // what repair and parse seal on the way
	e.Arguments = json.RawMessage(changed)
	e.Reset(streams.Parse, call.Parsed, time.Now(), "")
	sealAs(t, seals, streams.Parse, &e)
	body, _ := e.Marshal()
	m := nats.NewMsg(streams.Gate(streams.Validate))
	m.Data = body
	m.Header.Set(nats.MsgIdHdr, "appr-fix-0:repair:next:1:0")
	if _, err := p.js.PublishMsg(p.ctx, m); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		a, _, err := store.Get(p.ctx, "appr-fix-0")
		if err != nil || a.State != approval.Pending || a.ArgsHash != approval.ArgsHash(json.RawMessage(changed)) {
			return fmt.Errorf("record %s %s, want pending for the new arguments", a.State, a.ArgsHash)
		}
		return nil
	})
	// The policy gate updates the approval record before its status record
	// is published, so the status record may still be the first arrival's
	// for a moment: wait for the one of the repaired arguments.
	calls, err := p.js.KeyValue(p.ctx, streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		var rec pipeline.StatusRecord
		kve, err := calls.Get(p.ctx, "appr-fix-0")
		if err != nil {
			return err
		}
		if err := json.Unmarshal(kve.Value(), &rec); err != nil {
			return err
		}
		if rec.Status != call.ApprovalRequired || !strings.Contains(notes(rec), "a new approval is required") {
			return fmt.Errorf("status %s, history %s: does not say a new approval is needed", rec.Status, notes(rec))
		}
		return nil
	})
	// The approval of the old arguments arrives late: it must run nothing.
	if err := store.Resume(p.ctx, p.js, shown, rev); err != nil {
		t.Fatal(err)
	}
	p.settled(streams.Policy)
	if n := p.executed.Load(); n != 0 {
		t.Fatalf("executed %d times without an approval of the current arguments", n)
	}
	// A new approval of the new arguments; before it is sent on, an envelope
	// with arguments changed in flight arrives: the approval is not its.
	approved, arev, err := store.Decide(p.ctx, "appr-fix-0", approval.Approved, "carol", "checked again", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	forged := e
	forged.Status = call.ApprovalRequired
	forged.Arguments = json.RawMessage(`{"customer_id":"cus_6666","reason":"x"}`)
	fb, _ := forged.Marshal()
	if _, err := p.js.Publish(p.ctx, streams.Gate(streams.Policy), fb); err != nil {
		t.Fatal(err)
	}
	p.settled(streams.Policy)
	if err := store.Resume(p.ctx, p.js, approved, arev); err != nil {
		t.Fatal(err)
	}
	r := p.waitResults("appr-fix", 1)[0]
	if r["status"] != "executed" {
		t.Fatalf("ended %v, want executed", r["status"])
	}
	if got := ex.of("delete_customer_account"); len(got) != 1 || !strings.Contains(got[0], "cus_0001") {
		t.Fatalf("executions %v, want one with the repaired arguments", got)
	}
}

func TestPipeline_dry_run_executes_nothing_and_says_what_would_have_run(t *testing.T) {
	p, _, _ := startGatedPipeline(t, 0, 0)
	for _, c := range []struct{ name, rid, tool, args string }{
		{"request_header", "dry-hdr", "create_invoice", validInvoice},
		{"tool_policy", "dry-tool", "preview_refund", `{"amount":1200}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var extra []string
			if c.name == "request_header" {
				extra = []string{streams.HeaderDryRun, "true"}
			}
			p.publishAs(c.rid, c.tool, c.args, "bob", "", extra...)
			r := p.waitResults(c.rid, 1)[0]
			if r["status"] != "dry_run" || r["ok"] != true {
				t.Fatalf("ended %v, want dry_run", r["status"])
			}
			res, _ := json.Marshal(r["result"])
			if !strings.Contains(string(res), `"would_execute":{"arguments":`) || !strings.Contains(string(res), c.tool) {
				t.Fatalf("result %s does not say what would have executed", res)
			}
			if !strings.Contains(fmt.Sprint(r["text"]), "not executed (dry run)") {
				t.Fatalf("text %q does not say nothing ran", r["text"])
			}
		})
	}
	p.settled(streams.Execute)
	if n := p.executed.Load(); n != 0 {
		t.Fatalf("a dry run executed %d calls", n)
	}
}
