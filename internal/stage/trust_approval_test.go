package stage

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/streams"
)

// TestTrust_pending_approval_is_never_replaced: issue 15's "approvals can be
// swapped". A call waits for approval; the same call id arrives again with
// other arguments (a response id re-sent after the duplicate window, past
// whatever ingest checks). The pending record keeps what the human is shown,
// the arriving call ends policy_rejected, and approving the call runs the
// original arguments only: the tool never sees the second's.
func TestTrust_pending_approval_is_never_replaced(t *testing.T) {
	p, ex, store := startGatedPipeline(t, 0, 0)
	p.publishAs("swap", "delete_customer_account", deleteArgs, "alice", "admin")
	p.waitStatus("swap-0", call.ApprovalRequired)
	shown, rev, err := store.Get(p.ctx, "swap-0")
	if err != nil {
		t.Fatal(err)
	}

	const swapped = `{"customer_id":"cus_6666","reason":"customer asked to close the account"}`
	e, err := call.Unmarshal(shown.Envelope)
	if err != nil {
		t.Fatal(err)
	}
	// A new round of the same call id (its hops get new message ids, as
	// after a repair or past the stream's duplicate window).
	e.RepairAttempts++
	e.RawArguments, e.Arguments = swapped, json.RawMessage(swapped)
	e.Reset(streams.Parse, call.Parsed, time.Now(), "sent again")
	body, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg(streams.Gate(streams.Validate))
	m.Data = body
	m.Header.Set(nats.MsgIdHdr, "swap-0:resent:next:1:0")
	if _, err := p.js.PublishMsg(p.ctx, m); err != nil {
		t.Fatal(err)
	}
	r := p.waitResults("swap", 1)[0]
	if r["status"] != string(call.PolicyRejected) || !strings.Contains(fmt.Sprint(r["errors"]), "pending approval") {
		t.Fatalf("the second call ended %v %v, want policy_rejected saying a pending approval was kept", r["status"], r["errors"])
	}
	p.settled(streams.Policy)

	kept, krev, err := store.Get(p.ctx, "swap-0")
	if err != nil {
		t.Fatal(err)
	}
	if krev != rev || kept.State != approval.Pending || kept.ArgsHash != shown.ArgsHash || string(kept.Envelope) != string(shown.Envelope) {
		t.Fatalf("the pending record changed: rev %d→%d, %s hash %s→%s", rev, krev, kept.State, shown.ArgsHash, kept.ArgsHash)
	}

	// The operator approves what `toolgate approvals` showed (no --hash).
	decide(t, p, store, "swap-0", approval.Approved, "carol", "checked")
	rs := p.waitResults("swap", 2)
	if last := rs[len(rs)-1]; last["status"] != string(call.Executed) {
		t.Fatalf("the approved call ended %v %v, want executed", last["status"], last["errors"])
	}
	p.settled(streams.Policy)
	p.settled(streams.Execute)
	got := ex.of("delete_customer_account")
	if len(got) != 1 || !strings.Contains(got[0], "cus_9821") {
		t.Fatalf("executions %v, want exactly one with the original arguments", got)
	}
	for _, args := range got {
		if strings.Contains(args, "cus_6666") {
			t.Fatalf("the tool saw the swapped arguments: %s", args)
		}
	}
}
