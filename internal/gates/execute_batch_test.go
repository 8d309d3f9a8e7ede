package gates

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/batch"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

type batchRig struct {
	js jetstream.JetStream
	x  *Execute
	ex *countingExec
}

func newBatchRig(t *testing.T) *batchRig {
	t.Helper()
	_, js := testenv.Connect(t, testenv.RunJetStream(t))
	if err := streams.Ensure(context.Background(), js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), streams.BucketBatches)
	if err != nil {
		t.Fatal(err)
	}
	ex := &countingExec{}
	tools := execTools{
		"charge":      compiled(t, tool.Definition{Name: "charge", Atomic: true}),
		"get_weather": compiled(t, tool.Definition{Name: "get_weather"}),
	}
	x := newExecute(t, redisStore(t), ex, tools)
	x.Batches = &batch.KV{KV: kv, Now: time.Now}
	x.BatchWait = 100 * time.Millisecond
	return &batchRig{js: js, x: x, ex: ex}
}

func batchCall(rid string, i, size int, toolName string, atomic bool) call.Envelope {
	e := unsealed(rid, i, toolName, `{"n":`+string(rune('0'+i))+`}`)
	e.Batch = call.Batch{ID: rid, Index: i, Size: size, Atomic: atomic}
	return sealed(e)
}

// mark publishes what pipeline.Emitter.Outputs publishes for e.
func (r *batchRig) mark(t *testing.T, e call.Envelope) {
	t.Helper()
	outs := batch.Marks(e, pipeline.CutText)
	if len(outs) == 0 {
		t.Fatalf("no batch mark for %s in %s", e.CallID, e.Status)
	}
	for _, o := range outs {
		if _, err := r.js.Publish(context.Background(), o.Subject, o.Data); err != nil {
			t.Fatal(err)
		}
	}
}

func waiting(err error) bool {
	var we *worker.Error
	return errors.As(err, &we) && !we.Permanent && we.Code == "batch_waiting"
}

func TestBatch_atomic_call_waits_until_every_call_passed(t *testing.T) {
	r := newBatchRig(t)
	ctx := context.Background()
	if _, err := r.x.Handle(ctx, batchCall("rb1", 0, 2, "get_weather", true)); !waiting(err) {
		t.Fatalf("first call: %v, want to wait for the other", err)
	}
	if r.ex.runs.Load() != 0 {
		t.Fatal("a call of an atomic batch ran before every call passed")
	}
	out, err := r.x.Handle(ctx, batchCall("rb1", 1, 2, "get_weather", true))
	if err != nil || out[0].Status != call.Executed {
		t.Fatalf("last call: %v %v, want executed", out, err)
	}
	out, err = r.x.Handle(ctx, batchCall("rb1", 0, 2, "get_weather", true))
	if err != nil || out[0].Status != call.Executed || r.ex.runs.Load() != 2 {
		t.Fatalf("first call redelivered: %v %v runs=%d, want executed, 2 runs", out, err, r.ex.runs.Load())
	}
}

func TestBatch_calls_arriving_together_both_run_within_one_wait(t *testing.T) {
	r := newBatchRig(t)
	r.x.BatchWait = 5 * time.Second
	var wg sync.WaitGroup
	res := make([]call.Status, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 1 {
				time.Sleep(150 * time.Millisecond)
			}
			out, err := r.x.Handle(context.Background(), batchCall("rb2", i, 2, "charge", false))
			if err != nil {
				t.Error(err)
				return
			}
			res[i] = out[0].Status
		}()
	}
	wg.Wait()
	if res[0] != call.Executed || res[1] != call.Executed {
		t.Fatalf("statuses %v, want both executed (the waiting call sees the other pass)", res)
	}
}

func TestBatch_a_failed_call_aborts_the_others_and_is_named(t *testing.T) {
	r := newBatchRig(t)
	bad := batchCall("rb3", 1, 3, "charge", true)
	bad.Status = call.Parsed
	if err := bad.Move("validate", call.SchemaInvalid, time.Now(), "/amount: must be >= 1"); err != nil {
		t.Fatal(err)
	}
	if err := bad.Move("repair", call.Failed, time.Now(), "/amount: must be >= 1"); err != nil {
		t.Fatal(err)
	}
	bad.Failure = call.SchemaInvalid
	r.mark(t, bad)
	for _, i := range []int{0, 2} {
		out, err := r.x.Handle(context.Background(), batchCall("rb3", i, 3, "charge", true))
		if err != nil || out[0].Status != call.BatchAborted {
			t.Fatalf("call %d: %v %v, want batch_aborted", i, out, err)
		}
		why := strings.Join(out[0].Errors, " ")
		if !strings.Contains(why, "rb3-1") || !strings.Contains(why, "schema_invalid") || !strings.Contains(why, "/amount") {
			t.Fatalf("reason %q does not name the failed call and its failure", why)
		}
	}
	if r.ex.runs.Load() != 0 {
		t.Fatalf("%d calls of an aborted batch ran", r.ex.runs.Load())
	}
}

func TestBatch_tool_setting_makes_the_whole_response_atomic(t *testing.T) {
	r := newBatchRig(t)
	// get_weather is not atomic, but the response also calls charge, which is.
	for i, name := range []string{"get_weather", "charge"} {
		e := call.New("rb4", i, time.Now())
		e.ToolName, e.Batch = name, call.Batch{ID: "rb4", Index: i, Size: 2}
		r.mark(t, e)
	}
	if _, err := r.x.Handle(context.Background(), batchCall("rb4", 0, 2, "get_weather", false)); !waiting(err) {
		t.Fatalf("get_weather beside an atomic tool: %v, want to wait", err)
	}
	// Without an atomic tool or header, calls are independent.
	for i := range 2 {
		e := call.New("rb5", i, time.Now())
		e.ToolName, e.Batch = "get_weather", call.Batch{ID: "rb5", Index: i, Size: 2}
		r.mark(t, e)
	}
	out, err := r.x.Handle(context.Background(), batchCall("rb5", 0, 2, "get_weather", false))
	if err != nil || out[0].Status != call.Executed {
		t.Fatalf("independent call: %v %v, want executed at once", out, err)
	}
}

func TestBatch_other_calls_that_never_arrive_abort_after_the_timeout(t *testing.T) {
	r := newBatchRig(t)
	r.x.BatchTimeout = 50 * time.Millisecond
	out, err := r.x.Handle(context.Background(), batchCall("rb6", 0, 2, "charge", true))
	if err != nil || out[0].Status != call.BatchAborted {
		t.Fatalf("%v %v, want batch_aborted after the timeout", out, err)
	}
	if why := strings.Join(out[0].Errors, " "); !strings.Contains(why, "rb6-1") {
		t.Fatalf("reason %q does not name the missing call", why)
	}
	// The decision holds: the late call is aborted too, never run.
	out, err = r.x.Handle(context.Background(), batchCall("rb6", 1, 2, "charge", true))
	if err != nil || out[0].Status != call.BatchAborted || r.ex.runs.Load() != 0 {
		t.Fatalf("late call: %v %v runs=%d, want batch_aborted and nothing run", out, err, r.ex.runs.Load())
	}
}
