package producer

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
)

// AwaitAll needs no count of calls: the results say how many the response
// proposed (response_calls), so it returns once it holds that many distinct
// calls of each watched response, or a response's own result.
func TestAwaitAll_ends_when_each_response_holds_the_calls_its_results_announce(t *testing.T) {
	nc, js, _ := rig(t)
	p := New(js).ForTenant("acme")
	w, err := p.Watch("ra", "rb")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	call := func(id string, ok bool) []byte {
		st := wire.Executed
		if !ok {
			st = wire.PolicyRejected
		}
		b, _ := json.Marshal(wire.Result{CallID: id, ResponseID: "ra", Status: st, OK: ok, ResponseCalls: 3, Message: json.RawMessage(`{"id":"` + id + `"}`)})
		return b
	}
	none, _ := json.Marshal(wire.ResponseResult{ResponseID: "rb", Status: wire.NoToolCalls, OK: true})
	for _, m := range []struct {
		rid  string
		data []byte
	}{{"ra", call("ra-2", true)}, {"ra", call("ra-0", true)}, {"ra", call("ra-2", true)}, {"rb", none}, {"ra", call("ra-1", false)}} {
		if err := nc.Publish(wire.Results("acme", m.rid), m.data); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rs, err := w.AwaitAll(ctx)
	if err != nil || len(rs) != 2 {
		t.Fatalf("AwaitAll: %v, %d responses", err, len(rs))
	}
	a, b := rs[0], rs[1]
	if a.ResponseID != "ra" || len(a.Calls) != 3 || a.Expected != 3 || a.Calls[0].CallID != "ra-0" || a.Calls[2].CallID != "ra-2" || !a.Complete() || a.OK() {
		t.Fatalf("ra: %+v", a)
	}
	if msgs := a.Messages(); len(msgs) != 3 || string(msgs[1]) != `{"id":"ra-1"}` {
		t.Fatalf("messages %s", msgs)
	}
	if b.ResponseID != "rb" || b.Response == nil || !b.OK() || len(b.Calls) != 0 {
		t.Fatalf("rb: %+v", b)
	}
}

// A response whose calls are not all in (one waits for approval) ends at the
// caller's deadline with what came, marked incomplete.
func TestAwaitResponse_returns_what_came_at_the_deadline(t *testing.T) {
	nc, js, _ := rig(t)
	w, err := New(js).Watch("rc")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	b, _ := json.Marshal(wire.Result{CallID: "rc-0", ResponseID: "rc", Status: wire.Executed, OK: true, ResponseCalls: 2})
	if err := nc.Publish(wire.Results("", "rc"), b); err != nil {
		t.Fatal(err)
	}
	// The deadline comes only after the one result was read.
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if len(w.ch) == 0 {
			return errors.New("result not queued yet")
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	o, err := w.AwaitResponse(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || o == nil || len(o.Calls) != 1 || o.Expected != 2 || o.Complete() || o.OK() {
		t.Fatalf("AwaitResponse: %+v, %v", o, err)
	}
}

// A Watch keeps the latest progress event of each watched stream, and only
// of those.
func TestWatch_keeps_the_latest_progress_of_its_streams(t *testing.T) {
	nc, js, _ := rig(t)
	w, err := New(js).ForTenant("acme").Watch("rs")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, ok := w.Progress("rs"); ok {
		t.Fatal("progress before any event")
	}
	for _, m := range []string{`{"response_id":"rs","seq":2,"calls":[{"index":0,"name":"get_weather","argument_bytes":7}]}`, `{"response_id":"rs","seq":1,"calls":[]}`, `not json`} {
		if err := nc.Publish(wire.Progress("acme", "rs"), []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Publish(wire.Progress("acme", "other"), []byte(`{"response_id":"other","seq":9}`)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if p, ok := w.Progress("rs"); !ok || p.Seq != 2 || len(p.Calls) != 1 || p.Calls[0].Name != "get_weather" {
			return errors.New("no progress with seq 2 yet")
		}
		return nil
	})
	if _, ok := w.Progress("other"); ok {
		t.Error("progress of a stream not watched")
	}
}
