package gates

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/streams"
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
	r.x.Batches.(*BatchKV).Malformed = func(key string, _ error) { told = append(told, key) }
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

// FuzzBatchRecords: no bytes under any key panic the batch state, and a
// record accepted keeps what its decoder promises.
func FuzzBatchRecords(f *testing.F) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pass, _ := json.Marshal(pipeline.PassMark{CallID: "b-1", At: at})
	fail, _ := json.Marshal(pipeline.FailMark{CallID: "b-1", Tool: "t", Status: call.SchemaInvalid, Error: "x"})
	dec, _ := json.Marshal(Decision{Run: true, At: at})
	for _, s := range []struct{ key, data string }{
		{"b.passed.1", string(pass)}, {"b.failed.1", string(fail)}, {"b.decision", string(dec)},
		{"b.passed.1", "garbage"}, {"b.decision", `{"run":"yes"}`}, {"b.passed.01", string(pass)}, {"b.tool.1", "charge"}, {"b.x", "{}"},
	} {
		f.Add(s.key, []byte(s.data))
	}
	f.Fuzz(func(t *testing.T, key string, data []byte) {
		if d, err := DecodeDecision(data); err == nil && (d.At.IsZero() || (!d.Run && d.Reason == "") || len(d.Reason) > maxBatchReason) {
			t.Fatalf("accepted decision %+v", d)
		}
		if m, err := DecodePassMark("b-1", data); err == nil && (m.CallID != "b-1" || m.At.IsZero()) {
			t.Fatalf("accepted pass mark %+v", m)
		}
		if m, err := DecodeFailMark("b-1", data); err == nil && (m.CallID != "b-1" || m.Status == "") {
			t.Fatalf("accepted fail mark %+v", m)
		}
		if kind, i, err := parseBatchKey("b", 2, key); err == nil && kind != "decision" && (i < 0 || i >= 2) {
			t.Fatalf("accepted key %q as %s %d", key, kind, i)
		}
		st := batchState{id: "b", size: 2, passed: map[int]time.Time{}, failed: map[int]pipeline.FailMark{}}
		st.add(fakeEntry{key: key, value: data})
		if d, ok := st.decide(at, time.Minute); ok && d.Run && (len(st.passed) < 2 || st.bad != "") {
			t.Fatalf("one record decided run: %+v", st)
		}
	})
}

// fakeEntry is a put of value under key, as a watch delivers it.
type fakeEntry struct {
	key   string
	value []byte
}

func (e fakeEntry) Bucket() string                  { return streams.BucketBatches }
func (e fakeEntry) Key() string                     { return e.key }
func (e fakeEntry) Value() []byte                   { return e.value }
func (e fakeEntry) Revision() uint64                { return 1 }
func (e fakeEntry) Created() time.Time              { return time.Time{} }
func (e fakeEntry) Delta() uint64                   { return 0 }
func (e fakeEntry) Operation() jetstream.KeyValueOp { return jetstream.KeyValuePut }
