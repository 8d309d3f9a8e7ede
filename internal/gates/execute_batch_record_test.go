package gates

import (
	"context"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/batch"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/streams"
)

// putBatch writes data under a batches key as an outsider would.
func (r *batchRig) putBatch(t *testing.T, key string, data []byte) {
	t.Helper()
	if _, err := r.js.Publish(context.Background(), "$KV."+streams.BucketBatches+"."+key, data); err != nil {
		t.Fatal(err)
	}
}

func TestBatch_malformed_passed_mark_aborts_the_batch_and_nothing_runs(t *testing.T) {
	r := newBatchRig(t)
	var told []string
	r.x.Batches.(*batch.KV).Malformed = func(key string, _ error) { told = append(told, key) }
	// Not a mark toolgate writes: on the previous main it counted as "call
	// 1 passed", and call 0 ran although call 1 never reached execute.
	r.putBatch(t, streams.BatchKey("rbm1", "passed", 1), []byte(`garbage`))
	// Keys toolgate never writes are ignored: they neither pass nor fail.
	r.putBatch(t, "rbm1.passed.7", []byte(`{"call_id":"rbm1-7","at":"2026-01-01T00:00:00Z"}`))
	out, err := r.x.Handle(context.Background(), batchCall("rbm1", 0, 2, "charge", true))
	if err != nil || len(out) != 1 || out[0].Status != call.BatchAborted {
		t.Fatalf("%v %v, want batch_aborted", out, err)
	}
	if why := strings.Join(out[0].Errors, " "); !strings.Contains(why, "rbm1.passed.1") || !strings.Contains(why, "malformed") {
		t.Fatalf("reason %q does not name the malformed record", why)
	}
	if r.ex.runs.Load() != 0 {
		t.Fatalf("%d calls ran", r.ex.runs.Load())
	}
	if len(told) < 2 {
		t.Fatalf("told %v, want both records", told)
	}
}

func TestBatch_malformed_decision_aborts_every_call_instead_of_retrying_forever(t *testing.T) {
	r := newBatchRig(t)
	// On the previous main every delivery failed decoding it: a transient
	// error, redelivered until the budget ran out.
	r.putBatch(t, streams.BatchDecisionKey("rbm2"), []byte(`{"run":"yes"}`))
	for i := range 2 {
		out, err := r.x.Handle(context.Background(), batchCall("rbm2", i, 2, "charge", true))
		if err != nil || len(out) != 1 || out[0].Status != call.BatchAborted {
			t.Fatalf("call %d: %v %v, want batch_aborted", i, out, err)
		}
	}
	if r.ex.runs.Load() != 0 {
		t.Fatalf("%d calls ran", r.ex.runs.Load())
	}
}
