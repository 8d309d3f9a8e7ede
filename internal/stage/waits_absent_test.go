package stage

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// A call has no status record until it waits or ends (issue 30). Its first
// wait is stored only while there is still none: an outcome another
// delivery stored after the wait was built is never overwritten by it.
func TestWaits_first_wait_of_a_call_without_a_record_never_overwrites_an_outcome(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	calls, err := js.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	e := call.New("absent", 0, time.Now())
	e.Status = call.Approved
	data, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	w := &waits{stage: streams.Execute, calls: calls, emit: &pipeline.Emitter{}, now: time.Now, log: zerolog.Nop()}
	outs := w.retrying(worker.Msg{Data: data}, errors.New("no executor"), worker.Attempt{N: 1, Of: 10, Next: time.Now().Add(time.Second)})
	if len(outs) != 1 {
		t.Fatalf("%d outputs, want the wait record", len(outs))
	}
	// Meanwhile another delivery ended the call.
	if _, err := calls.Put(ctx, e.CallID, []byte(`{"call_id":"absent-0","status":"executed"}`)); err != nil {
		t.Fatal(err)
	}
	o := outs[0]
	if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: o.Subject, Header: o.Header, Data: o.Data}); err == nil {
		t.Fatal("the wait was stored over the outcome")
	}
	got, err := calls.Get(ctx, e.CallID)
	if err != nil || string(got.Value()) != `{"call_id":"absent-0","status":"executed"}` {
		t.Fatalf("record %v, %v; want the outcome kept", got, err)
	}
}
