package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

// TestWorker_keep_alive_stops_redelivery_of_work_longer_than_ack_wait: the
// consumer's AckWait is 1s and the "tool" takes 3s; kept alive with
// InProgress the input is handled once and never redelivered. Without
// KeepAlive JetStream redelivers it after 1s to the second handler slot.
func TestWorker_keep_alive_stops_redelivery_of_work_longer_than_ack_wait(t *testing.T) {
	r := newRig(t, time.Second, 5)
	var runs, redelivered atomic.Int32
	var sawAckWait atomic.Int64
	h := func(ctx context.Context, m Msg) ([]Output, error) {
		runs.Add(1)
		if m.NumDelivered > 1 {
			redelivered.Add(1)
		}
		sawAckWait.Store(int64(AckWait(ctx)))
		stop := KeepAlive(ctx)
		defer stop()
		<-time.After(3 * time.Second) // the tool's own running time
		return echo(ctx, m)
	}
	r.publish(t, "in.x", "slow")
	start(t, r, Config{Concurrency: 2}, h)
	testenv.Eventually(t, 20*time.Second, 50*time.Millisecond, r.consumerIdle("stage"))
	c, err := r.js.Consumer(r.ctx, "IN", "stage")
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 || redelivered.Load() != 0 || info.NumRedelivered != 0 {
		t.Fatalf("runs %d, redelivered %d (consumer counts %d); want one run, no redelivery", runs.Load(), redelivered.Load(), info.NumRedelivered)
	}
	if got := time.Duration(sawAckWait.Load()); got != time.Second {
		t.Errorf("AckWait(ctx) = %v, want the consumer's 1s", got)
	}
	if got := r.count(t, "OUT", "out.>"); got != 1 {
		t.Errorf("outputs %d, want 1", got)
	}
}

func TestKeepAlive_outside_a_worker_does_nothing(t *testing.T) {
	stop := KeepAlive(context.Background())
	stop()
	stop()
	if AckWait(context.Background()) != 0 {
		t.Error("AckWait outside a worker")
	}
}

// TestWorker_term_carries_the_failure_class: a dead-lettered input is
// terminated with its failure code as the reason, which the server puts in
// the MSG_TERMINATED advisory.
func TestWorker_term_carries_the_failure_class(t *testing.T) {
	r := newRig(t, 5*time.Second, 5)
	nc := r.js.Conn()
	sub, err := nc.SubscribeSync("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.IN.stage")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	start(t, r, Config{}, func(context.Context, Msg) ([]Output, error) {
		return nil, Permanent("schema_invalid", errors.New("amount must be a number"))
	})
	r.publish(t, "in.x", "bad")
	m, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no MSG_TERMINATED advisory: %v", err)
	}
	var adv struct {
		Stream, Consumer, Reason string
		StreamSeq                uint64 `json:"stream_seq"`
	}
	if err := json.Unmarshal(m.Data, &adv); err != nil {
		t.Fatal(err)
	}
	if adv.Reason != "schema_invalid" || adv.Consumer != "stage" || adv.StreamSeq != 1 {
		t.Fatalf("advisory = %s; want reason schema_invalid", fmt.Sprint(string(m.Data)))
	}
}
