package batch

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/streams"
)

// FuzzBatchRecords: no bytes under any key panic the batch state, and a
// record accepted keeps what its decoder promises.
func FuzzBatchRecords(f *testing.F) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pass, _ := json.Marshal(PassMark{CallID: "b-1", At: at})
	fail, _ := json.Marshal(FailMark{CallID: "b-1", Tool: "t", Status: call.SchemaInvalid, Error: "x"})
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
		st := state{id: "b", size: 2, passed: map[int]time.Time{}, failed: map[int]FailMark{}}
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
