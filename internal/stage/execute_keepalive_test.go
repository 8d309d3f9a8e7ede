package stage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

const slowChargeTool = `
tools:
  - name: charge
    description: Charges a customer, slowly.
    input_schema: {type: object, properties: {amount: {type: integer}}, required: [amount]}
    executor: {timeout: 6s}
    policy: {risk: write}
`

// TestExecute_tool_slower_than_ack_wait_is_kept_alive_not_redelivered: the
// consumers' AckWait is 1s, the tool's timeout 6s and the tool takes 3s. The
// execute gate keeps the delivery alive with InProgress while the executor
// runs, so the call runs once and JetStream delivers it once. Without it
// the delivery is redelivered every second while the tool still runs.
func TestExecute_tool_slower_than_ack_wait_is_kept_alive_not_redelivered(t *testing.T) {
	r := newExecRig(t, func(_ int32, c toolserver.Call) (any, error) {
		<-time.After(3 * time.Second) // the tool's own running time
		return map[string]any{"charged": true}, nil
	})
	// A shorter AckWait and a tool whose timeout is beyond it.
	r.ackWait = time.Second
	if err := streams.Ensure(r.ctx, r.js, testSettings(r.ackWait)); err != nil {
		t.Fatal(err)
	}
	defs, err := tool.Load("charge.yaml", []byte(slowChargeTool))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := r.js.KeyValue(r.ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Apply(r.ctx, kv, "charge.yaml", defs, false); err != nil {
		t.Fatal(err)
	}
	c, err := r.js.Consumer(r.ctx, streams.StreamGates, streams.Execute)
	if err != nil {
		t.Fatal(err)
	}
	if aw := c.CachedInfo().Config.AckWait; aw != time.Second {
		t.Fatalf("execute consumer AckWait = %v, want 1s", aw)
	}
	r.startInProcess()
	r.publishApproved(approvedCall("rid-slow", 0, `{"amount":5}`), "rid-slow-0")
	r.settled(30 * time.Second)
	testenv.Eventually(t, 10*time.Second, 50*time.Millisecond, func() error {
		if n := len(r.results("rid-slow")); n != 1 {
			return fmt.Errorf("%d results", n)
		}
		return nil
	})
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.effects.Load() != 1 || r.requests.Load() != 1 || info.Delivered.Consumer != 1 {
		t.Fatalf("tool ran %d times, %d execution requests, %d deliveries; want 1, 1, 1 (no redelivery)",
			r.effects.Load(), r.requests.Load(), info.Delivered.Consumer)
	}
	if got := r.results("rid-slow")[0]["status"]; got != "executed" {
		t.Errorf("status = %v, want executed", got)
	}
}
