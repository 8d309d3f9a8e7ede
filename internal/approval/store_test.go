package approval

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

func setup(t *testing.T) (*Store, jetstream.JetStream) {
	t.Helper()
	_, js := testenv.Connect(t, testenv.RunJetStream(t))
	ctx := context.Background()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, streams.BucketApprovals)
	if err != nil {
		t.Fatal(err)
	}
	return NewStore(kv), js
}

func waiting(t *testing.T, s *Store, id, args string, ttl time.Duration, now time.Time) Record {
	t.Helper()
	e := call.New("resp", 0, now)
	e.CallID, e.ToolName, e.Arguments, e.Status = id, "delete_customer_account", json.RawMessage(args), call.ApprovalRequired
	r, err := NewRecord(e, "irreversible", ttl, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return r
}

// resumed counts envelopes published back to the policy gate.
func resumed(t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	st, err := js.Stream(context.Background(), streams.StreamGates)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background(), jetstream.WithSubjectFilter(streams.Gate(streams.Policy)))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

func TestArgsHash_same_arguments_in_another_spelling_hash_alike(t *testing.T) {
	a := ArgsHash(json.RawMessage(`{"a":1,"b":"x"}`))
	if b := ArgsHash(json.RawMessage(`{ "b": "x", "a": 1 }`)); a != b {
		t.Fatal("key order or spacing changed the hash")
	}
	if c := ArgsHash(json.RawMessage(`{"a":2,"b":"x"}`)); a == c {
		t.Fatal("other arguments have the same hash")
	}
}

func TestStore_two_deciders_one_wins(t *testing.T) {
	s, _ := setup(t)
	now := time.Now()
	waiting(t, s, "c-1", `{"customer_id":"cus_1"}`, time.Minute, now)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, st := range []State{Approved, Denied} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = s.Decide(context.Background(), "c-1", st, "op", "", "", now)
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrConflict) && !errors.Is(err, ErrDecided):
			t.Fatalf("loser got %v, want a conflict or already decided", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d decisions won, want exactly 1 (%v)", won, errs)
	}
}

func TestStore_decide_refuses_what_was_not_shown(t *testing.T) {
	s, _ := setup(t)
	now := time.Now()
	r := waiting(t, s, "c-2", `{"customer_id":"cus_1"}`, time.Minute, now)
	ctx := context.Background()
	if _, _, err := s.Decide(ctx, "c-2", Approved, "op", "", "deadbeef", now); !errors.Is(err, ErrChanged) {
		t.Fatalf("approving another argument hash: %v, want ErrChanged", err)
	}
	if _, _, err := s.Decide(ctx, "c-2", Approved, "", "", "", now); err == nil {
		t.Fatal("a decision without --by was accepted")
	}
	if _, _, err := s.Decide(ctx, "c-2", Approved, "op", "", "", now.Add(2*time.Minute)); !errors.Is(err, ErrDecided) {
		t.Fatalf("approving after expiry: %v, want refused", err)
	}
	if _, _, err := s.Decide(ctx, "c-2", Approved, "op", "ok", r.ArgsHash[:12], now); err != nil {
		t.Fatalf("approving the shown hash: %v", err)
	}
	if _, _, err := s.Decide(ctx, "nope", Approved, "op", "", "", now); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown call: %v, want ErrNotFound", err)
	}
}

func TestSweeper_expires_once_across_replicas_and_resends_lost_decisions(t *testing.T) {
	s, js := setup(t)
	ctx := context.Background()
	start := time.Now()
	waiting(t, s, "c-late", `{"customer_id":"cus_1"}`, time.Minute, start)
	waiting(t, s, "c-open", `{"customer_id":"cus_2"}`, time.Hour, start)
	later := func() time.Time { return start.Add(2 * time.Minute) }
	a := &Sweeper{Store: s, JS: js, Now: later}
	b := &Sweeper{Store: s, JS: js, Now: later}
	var wg sync.WaitGroup
	for _, sw := range []*Sweeper{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := sw.Sweep(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if r, _, _ := s.Get(ctx, "c-late"); r.State != Expired || !r.Resumed {
		t.Fatalf("late call %s resumed=%v, want expired and resumed", r.State, r.Resumed)
	}
	if r, _, _ := s.Get(ctx, "c-open"); r.State != Pending {
		t.Fatalf("open call %s, want still pending", r.State)
	}
	if n := resumed(t, js); n != 1 {
		t.Fatalf("%d envelopes sent back, want 1", n)
	}
	// A decision whose sender died before publishing is resent after Grace.
	if _, _, err := s.Decide(ctx, "c-open", Denied, "op", "no", "", start); err != nil {
		t.Fatal(err)
	}
	if n, _ := a.Sweep(ctx); n != 1 {
		t.Fatalf("resent %d, want the unresumed decision", n)
	}
	if n := resumed(t, js); n != 2 {
		t.Fatalf("%d envelopes sent back, want 2", n)
	}
}
