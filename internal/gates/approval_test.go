package gates

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

const approvalTools = `
tools:
  - name: delete_customer_account
    input_schema:
      type: object
      properties: {customer_id: {type: string}}
    policy: {risk: irreversible, allow: "true"}
  - name: wipe_backups
    input_schema: {type: object}
    policy: {risk: irreversible, allow: "true"}
`

// approvalGate is a policy gate over the real approvals bucket of an
// embedded nats-server.
func approvalGate(t *testing.T) (*Policy, *approval.Store) {
	t.Helper()
	_, js := testenv.Connect(t, testenv.RunJetStream(t))
	ctx := context.Background()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, streams.BucketApprovals)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := tool.Load("tools.yaml", []byte(approvalTools))
	if err != nil {
		t.Fatal(err)
	}
	tools := toolSet{}
	for i, d := range defs {
		c, err := tool.Compile(d, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		tools[d.Name] = c
	}
	store := approval.NewStore(kv)
	return &Policy{Tools: tools, Approvals: store, Now: time.Now}, store
}

// arriving is call c-1 of tool with args, as the business gate passes it.
func arriving(t *testing.T, toolName, args string) call.Envelope {
	t.Helper()
	e := call.New("resp-1", 0, time.Now())
	e.CallID, e.ToolName, e.RawArguments, e.Arguments = "c-1", toolName, args, json.RawMessage(args)
	for _, s := range []call.Status{call.Parsed, call.Validated, call.BusinessValid} {
		if err := e.Move("test", s, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func TestPolicy_pending_approval_for_other_arguments_is_never_replaced(t *testing.T) {
	const shown = `{"customer_id":"cus_1"}`
	for _, c := range []struct{ name, tool, args string }{
		{"other_arguments", "delete_customer_account", `{"customer_id":"cus_6666"}`},
		{"other_tool", "wipe_backups", shown},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, store := approvalGate(t)
			ctx := context.Background()
			out, err := p.Handle(ctx, arriving(t, "delete_customer_account", shown))
			if err != nil || len(out) != 1 || out[0].Status != call.ApprovalRequired {
				t.Fatalf("first call: %v %v, want approval_required", out, err)
			}
			before, rev, err := store.Get(ctx, "c-1")
			if err != nil {
				t.Fatal(err)
			}
			out, err = p.Handle(ctx, arriving(t, c.tool, c.args))
			if err != nil || len(out) != 1 {
				t.Fatalf("second call: %v %v, want one envelope", out, err)
			}
			if out[0].Status != call.PolicyRejected || !strings.Contains(strings.Join(out[0].Errors, " "), "pending approval") {
				t.Fatalf("second call ended %s %v, want policy_rejected saying a pending approval was kept", out[0].Status, out[0].Errors)
			}
			after, arev, err := store.Get(ctx, "c-1")
			if err != nil {
				t.Fatal(err)
			}
			if arev != rev || after.ArgsHash != before.ArgsHash || after.Tool != before.Tool || string(after.Envelope) != string(before.Envelope) || after.State != approval.Pending {
				t.Fatalf("the pending record changed: rev %d→%d, %s %s→%s %s", rev, arev, before.Tool, before.ArgsHash, after.Tool, after.ArgsHash)
			}
		})
	}
}

func TestPolicy_decided_approval_for_other_arguments_is_replaced_by_a_new_pending_one(t *testing.T) {
	p, store := approvalGate(t)
	ctx := context.Background()
	if _, err := p.Handle(ctx, arriving(t, "delete_customer_account", `{"customer_id":"cus_1"}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Decide(ctx, "c-1", approval.Denied, "carol", "wrong customer", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	changed := `{"customer_id":"cus_2"}`
	out, err := p.Handle(ctx, arriving(t, "delete_customer_account", changed))
	if err != nil || len(out) != 1 || out[0].Status != call.ApprovalRequired {
		t.Fatalf("call after a decision: %v %v, want approval_required", out, err)
	}
	rec, _, err := store.Get(ctx, "c-1")
	if err != nil || rec.State != approval.Pending || rec.ArgsHash != approval.ArgsHash(json.RawMessage(changed)) || rec.By != "" {
		t.Fatalf("record %+v %v, want a new pending one for the new arguments, no decision carried over", rec, err)
	}
}

// The decision records the hash approved, and only an envelope with exactly
// those arguments moves on approved, carrying that hash for its policy seal.
func TestPolicy_approval_moves_only_the_approved_arguments_on(t *testing.T) {
	p, store := approvalGate(t)
	ctx := context.Background()
	if _, err := p.Handle(ctx, arriving(t, "delete_customer_account", `{"customer_id":"cus_1"}`)); err != nil {
		t.Fatal(err)
	}
	pending, _, err := store.Get(ctx, "c-1")
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := store.Decide(ctx, "c-1", approval.Approved, "carol", "", pending.ArgsHash, time.Now())
	if err != nil || rec.ArgsHash != pending.ArgsHash {
		t.Fatalf("decided %+v %v, want the hash shown recorded", rec, err)
	}
	waiting, err := call.Unmarshal(rec.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	forged := waiting
	forged.Arguments = json.RawMessage(`{"customer_id":"cus_6666"}`)
	if out, err := p.Handle(ctx, forged); err != nil || len(out) != 0 {
		t.Fatalf("an envelope with other arguments under the approval: %v %v, want dropped", out, err)
	}
	out, err := p.Handle(ctx, waiting)
	if err != nil || len(out) != 1 || out[0].Status != call.Approved {
		t.Fatalf("the approved envelope: %v %v, want approved", out, err)
	}
	if a := out[0].Approval; a == nil || a.Hash != pending.ArgsHash || a.By != "carol" {
		t.Fatalf("approval %+v, want carol's decision over hash %s", a, pending.ArgsHash)
	}
}
