package pipeline

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// Issue 17 point 1: a call the policy stage leaves waiting for a human is
// announced on its response's progress subject, the one a producer may
// read besides its results: which call, for what, since and until when, and
// neither its arguments nor the wait's reason. A call that moves on, or
// ends, announces nothing.
func TestOutputs_a_call_left_waiting_for_approval_notifies_its_producer(t *testing.T) {
	since := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	until := since.Add(15 * time.Minute)
	type notice struct{ subject, data string }
	var got []notice
	em := &Emitter{
		Waits: func(stage string, e call.Envelope) *Wait {
			if e.Status != call.ApprovalRequired {
				return nil
			}
			return &Wait{Stage: stage, For: WaitApproval, Detail: "acct cus_secret_1 is irreversible", Since: since, Until: until, By: []string{"admin"}}
		},
		Notify: func(subject string, data []byte) { got = append(got, notice{subject, string(data)}) },
	}
	for _, test := range []struct {
		name   string
		status call.Status
		want   int
	}{
		{"waiting for approval", call.ApprovalRequired, 1},
		{"approved: moves on to execute", call.Approved, 0},
		{"rejected: ends", call.PolicyRejected, 0},
	} {
		t.Run(test.name, func(t *testing.T) {
			got = nil
			e := call.New("resp-n", 1, since)
			e.ToolName, e.Status, e.Request.Tenant = "delete_customer_account", test.status, "acme"
			e.RawArguments, e.Arguments = `{"customer_id":"cus_secret_1"}`, json.RawMessage(`{"customer_id":"cus_secret_1"}`)
			if _, err := em.Outputs(streams.Policy, e); err != nil {
				t.Fatal(err)
			}
			if len(got) != test.want {
				t.Fatalf("%d notices, want %d: %v", len(got), test.want, got)
			}
			if test.want == 0 {
				return
			}
			if got[0].subject != "toolgate.progress.acme.resp-n" {
				t.Errorf("subject %s", got[0].subject)
			}
			if wire.NoticeKind([]byte(got[0].data)) != wire.NoticeWaiting {
				t.Errorf("kind of %s", got[0].data)
			}
			var n wire.Waiting
			if err := json.Unmarshal([]byte(got[0].data), &n); err != nil {
				t.Fatal(err)
			}
			want := wire.Waiting{Kind: "waiting", ResponseID: "resp-n", CallID: e.CallID, Tool: "delete_customer_account", For: "approval", Since: since, Until: until}
			if n != want {
				t.Errorf("notice %+v, want %+v", n, want)
			}
			if strings.Contains(got[0].data, "cus_secret_1") {
				t.Errorf("the notice carries the arguments: %s", got[0].data)
			}
		})
	}
}
