package toolserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/testenv"
)

// With Concurrency(n), n calls of one tool run at once in one process:
// each call here waits until all four are in the tool together. Without
// it, micro handed the tool's requests over one at a time, so the first
// call waited alone and every other one queued behind it.
func TestServer_Concurrency_runs_that_many_calls_of_a_tool_at_once(t *testing.T) {
	nc := replayConn(t, testenv.RunJetStream(t))
	signer := testSigner(t)
	const n = 4
	srv, err := New(nc, "erp", "1.0.0", PublicKey(signer.Public()...), Concurrency(n))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	var in, peak, runs atomic.Int32
	all := make(chan struct{})
	var once sync.Once
	if err := srv.Handle("book", func(ctx context.Context, c Call) (any, error) {
		runs.Add(1)
		now := enter(&in, &peak)
		defer in.Add(-1)
		if now == n {
			once.Do(func() { close(all) })
		}
		select {
		case <-all:
			return map[string]bool{"booked": true}, nil
		case <-time.After(3 * time.Second):
			return nil, fmt.Errorf("only %d calls in the tool at once", in.Load())
		}
	}); err != nil {
		t.Fatal(err)
	}
	ex := &execute.NATS{NC: nc, Signer: signer}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := execute.Request{Tool: "book", CallID: fmt.Sprintf("r-%d", i), IdempotencyKey: fmt.Sprintf("k%d", i), Arguments: json.RawMessage(`{}`)}
			rep, err := ex.Execute(ctx, req)
			if err == nil && !rep.OK {
				err = fmt.Errorf("call %d: %s", i, rep.Error)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if peak.Load() != n || runs.Load() != n {
		t.Fatalf("peak %d calls at once and %d runs, want %d and %d", peak.Load(), runs.Load(), n, n)
	}
}

// The default stays one call at a time: a Func written before the option
// need not be safe for concurrent use.
func TestServer_runs_one_call_of_a_tool_at_a_time_by_default(t *testing.T) {
	nc := replayConn(t, testenv.RunJetStream(t))
	signer := testSigner(t)
	srv, err := New(nc, "erp", "1.0.0", PublicKey(signer.Public()...))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	var in, peak atomic.Int32
	if err := srv.Handle("book", func(ctx context.Context, c Call) (any, error) {
		enter(&in, &peak)
		defer in.Add(-1)
		time.Sleep(20 * time.Millisecond)
		return map[string]bool{"booked": true}, nil
	}); err != nil {
		t.Fatal(err)
	}
	ex := &execute.NATS{NC: nc, Signer: signer}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := execute.Request{Tool: "book", CallID: fmt.Sprintf("r-%d", i), IdempotencyKey: fmt.Sprintf("k%d", i), Arguments: json.RawMessage(`{}`)}
			if rep, err := ex.Execute(ctx, req); err != nil || !rep.OK {
				t.Errorf("call %d: %+v %v", i, rep, err)
			}
		}()
	}
	wg.Wait()
	if peak.Load() != 1 {
		t.Fatalf("%d calls at once by default, want 1", peak.Load())
	}
	if _, err := New(nc, "erp2", "1.0.0", PublicKey(signer.Public()...), Concurrency(0)); err == nil {
		t.Fatal("Concurrency(0) accepted")
	}
}

// enter counts a call into the tool and keeps the peak; it returns how many
// are in now.
func enter(in, peak *atomic.Int32) int32 {
	now := in.Add(1)
	for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
	}
	return now
}
