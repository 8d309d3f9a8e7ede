package producer_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/httpingest/pipetest"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/pkg/wire"
)

// Issue 17 point 1: a least-privilege producer (the producer user only: no
// bucket, no admin) whose call needs a human approval is told so by the
// real pipeline, each stage as its own NATS user: AwaitResponse returns on
// its deadline with the call in Outcomes.Waiting, for "approval", until its
// expiry (the default 15 minutes ahead), and no arguments. Before, it got
// only context.DeadlineExceeded, as from a stopped pipeline.
func TestAwaitResponse_a_call_waiting_for_approval_is_reported_with_its_expiry(t *testing.T) {
	// The producer may assert roles (issue 28): the admin-only tool waits
	// for approval.
	p := pipetest.Start(t, pipetest.Options{AssertUsers: []string{authz.Producer}})
	p.Serve(t, func(tool string, c toolserver.Call) (any, error) { return map[string]any{"done": tool}, nil })
	_, js := p.Connect(t, authz.Producer)
	pr := producer.New(js).AssertingAs(authz.Producer)
	body, err := os.ReadFile(filepath.Join(pipetest.Root(), "examples", "responses", "delete-account.json"))
	if err != nil {
		t.Fatal(err)
	}
	rid := "prod-wait-1"
	w, err := pr.Watch(rid)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	before := time.Now()
	if err := pr.PublishResponse(context.Background(), producer.Meta{Provider: "openai-chat", ResponseID: rid, Roles: "admin"}, body); err != nil {
		t.Fatal(err)
	}
	// Wait until the notice is in, then let the await run out.
	var got []wire.Waiting
	deadline := time.Now().Add(60 * time.Second)
	for len(got) == 0 && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		o, err := w.AwaitResponse(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || o.Complete() {
			t.Fatalf("await: %v, %+v: the call must wait", err, o)
		}
		got = o.Waiting
	}
	if len(got) != 1 {
		t.Fatalf("waiting %+v, want the one call", got)
	}
	n := got[0]
	if n.CallID != rid+"-0" || n.Tool != "delete_customer_account" || n.For != wire.WaitingForApproval || n.ResponseID != rid {
		t.Errorf("notice %+v", n)
	}
	if n.Until.Before(before.Add(14*time.Minute)) || n.Until.After(time.Now().Add(16*time.Minute)) || n.Since.After(n.Until) {
		t.Errorf("until %v since %v: want the approval's expiry, 15m after it was asked", n.Until, n.Since)
	}
	if ws := w.Waiting(rid); len(ws) != 1 || ws[0] != n {
		t.Errorf("Watch.Waiting %+v", ws)
	}
	if strings.Contains(n.Tool+n.CallID+n.For, "cus_9821") {
		t.Error("the notice carries arguments")
	}
}
