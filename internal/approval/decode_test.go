package approval

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/streams"
)

// told collects what a store tells OnMalformed.
type told struct {
	mu   sync.Mutex
	keys []string
}

func (c *told) add(key string, _ error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys = append(c.keys, key)
}

func (c *told) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.keys...)
}

// putRaw writes data under key as an outsider would: a plain publish to the
// bucket's subject.
func putRaw(t *testing.T, s *Store, key string, data []byte) {
	t.Helper()
	if _, err := s.kv.Put(context.Background(), key, data); err != nil {
		t.Fatal(err)
	}
}

func TestSweeper_malformed_record_is_skipped_told_once_and_the_others_still_expire(t *testing.T) {
	s, js := setup(t)
	c := &told{}
	s.OnMalformed = c.add
	ctx := context.Background()
	start := time.Now()
	// The record: a status, no call id, no hash. It used to panic
	// the sweeper on r.ArgsHash[:16].
	if _, err := js.Publish(ctx, "$KV."+streams.BucketApprovals+".x-0", []byte(`{"status":"approved"}`)); err != nil {
		t.Fatal(err)
	}
	putRaw(t, s, "x-1", []byte(`{"call_id":"x-1","tool":"t","args_hash":"ab","state":"approved","by":"me"}`))
	waiting(t, s, "c-late", `{"customer_id":"cus_1"}`, time.Minute, start)
	sw := &Sweeper{Store: s, JS: js, Now: func() time.Time { return start.Add(2 * time.Minute) }}
	n, err := sw.Sweep(ctx)
	if err != nil || n != 1 {
		t.Fatalf("sweep resumed %d (%v), want the expired call only", n, err)
	}
	if r, _, _ := s.Get(ctx, "c-late"); r.State != Expired || !r.Resumed {
		t.Fatalf("late call %s resumed=%v, want expired and resumed", r.State, r.Resumed)
	}
	if _, err := sw.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.list(), ","); got != "x-0,x-1" {
		t.Fatalf("told %q, want x-0 and x-1 once each", got)
	}
	if _, _, err := s.Get(ctx, "x-0"); !errors.Is(err, ErrMalformed) {
		t.Fatalf("reading x-0: %v, want ErrMalformed", err)
	}
	if _, _, err := s.Decide(ctx, "x-0", Approved, "op", "", "", start); !errors.Is(err, ErrMalformed) {
		t.Fatalf("approving x-0: %v, want ErrMalformed", err)
	}
}

func TestSweeper_malformed_record_with_its_waiting_call_intact_ends_denied(t *testing.T) {
	s, js := setup(t)
	s.OnMalformed = (&told{}).add
	ctx := context.Background()
	now := time.Now()
	r := waiting(t, s, "c-bad", `{"customer_id":"cus_1"}`, time.Hour, now)
	var raw map[string]any
	data, _ := json.Marshal(r)
	_ = json.Unmarshal(data, &raw)
	raw["args_hash"] = "not-a-hash"
	data, _ = json.Marshal(raw)
	putRaw(t, s, "c-bad", data)
	sw := &Sweeper{Store: s, JS: js, Now: func() time.Time { return now }}
	if n, err := sw.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep resumed %d (%v), want the call with the broken record", n, err)
	}
	got, _, err := s.Get(ctx, "c-bad")
	if err != nil || got.State != Denied || got.By != "toolgate" || !got.Resumed || !strings.Contains(got.Reason, "malformed") {
		t.Fatalf("record now %+v (%v), want denied by toolgate for a malformed record, resumed", got, err)
	}
	if !got.Matches(r.Tool, json.RawMessage(`{"customer_id":"cus_1"}`)) {
		t.Fatal("the replacement record is not for the waiting call's arguments")
	}
	if n := resumed(t, js); n != 1 {
		t.Fatalf("%d envelopes sent back, want 1", n)
	}
}

func TestResume_short_hash_never_slices_past_the_end(t *testing.T) {
	if ShortHash("ab") != "ab" || len(ShortHash(strings.Repeat("a", 64))) != 16 {
		t.Fatal("ShortHash")
	}
}

// FuzzDecode: any bytes under any key decode to an error or to a record
// that keeps every invariant Decode promises.
func FuzzDecode(f *testing.F) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := call.New("resp", 0, now)
	e.ToolName, e.Arguments, e.Status = "delete_customer_account", json.RawMessage(`{"id":1}`), call.ApprovalRequired
	r, _ := NewRecord(e, "why", time.Minute, now)
	good, _ := json.Marshal(r)
	decided, _ := json.Marshal(r.Decided(Approved, "op", "ok", now))
	for _, seed := range [][]byte{good, decided, []byte(`{"status":"approved"}`), []byte(`null`), []byte(`[]`), []byte(`{"call_id":"resp-0","args_hash":""}`), []byte(`{} {}`)} {
		f.Add("resp-0", seed)
	}
	f.Fuzz(func(t *testing.T, key string, data []byte) {
		r, err := Decode(key, data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			Salvage(key, data)
			return
		}
		e, uerr := call.Unmarshal(r.Envelope)
		switch {
		case r.CallID != key, r.Tool == "", !redact.IsSHA256Hex(r.ArgsHash), len(ShortHash(r.ArgsHash)) != 16:
			t.Fatalf("accepted %+v under %q", r, key)
		case r.State != Pending && r.State != Approved && r.State != Denied && r.State != Expired:
			t.Fatalf("accepted state %q", r.State)
		case uerr != nil || e.CallID != key || ArgsHash(e.Arguments) != r.ArgsHash:
			t.Fatalf("accepted an envelope that is not the call's: %v", uerr)
		}
		_ = r.Note()
	})
}

func TestSweeper_garbage_record_of_a_waiting_call_is_denied_from_its_status_record(t *testing.T) {
	s, js := setup(t)
	s.OnMalformed = (&told{}).add
	ctx := context.Background()
	calls, err := js.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	waiting(t, s, "c-gone", `{"customer_id":"cus_1"}`, time.Hour, now)
	status := `{"call_id":"c-gone","response_id":"resp","tool":"delete_customer_account","provider":"openai-chat","source":"native","status":"approval_required","repair_attempts":0,"arguments_hash":"x","history":[{"stage":"policy","status":"approval_required","at":"2026-01-01T00:00:00Z"}]}`
	if _, err := calls.Put(ctx, "c-gone", []byte(status)); err != nil {
		t.Fatal(err)
	}
	putRaw(t, s, "c-gone", []byte(`{"status":"approved"}`)) // nothing of the call is left in it
	sw := &Sweeper{Store: s, JS: js, Now: func() time.Time { return now }}
	if n, err := sw.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("without the calls bucket: resumed %d (%v), want the record left as it is", n, err)
	}
	sw.Calls = calls
	if n, err := sw.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("resumed %d (%v), want the call rebuilt from its status record", n, err)
	}
	got, _, err := s.Get(ctx, "c-gone")
	if err != nil || got.State != Denied || got.Tool != "delete_customer_account" || !got.Resumed {
		t.Fatalf("record now %+v (%v), want denied and resumed", got, err)
	}
	e, err := call.Unmarshal(got.Envelope)
	if err != nil || e.Status != call.ApprovalRequired || len(e.Arguments) != 0 || !strings.Contains(e.History[len(e.History)-1].Note, "rebuilt from its status record") {
		t.Fatalf("resumed envelope %+v (%v)", e, err)
	}
}
