package toolserver

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/testenv"
)

func TestServer_answers_status_queries_from_the_keys_it_ran(t *testing.T) {
	nc := replayConn(t, testenv.RunJetStream(t))
	signer := testSigner(t)
	srv, err := New(nc, "billing", "1.0.0", PublicKey(signer.Public()...))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	var runs atomic.Int32
	if err := srv.Handle("charge", func(ctx context.Context, c Call) (any, error) {
		runs.Add(1)
		return map[string]any{"charged": 5}, nil
	}); err != nil {
		t.Fatal(err)
	}
	ex := &execute.NATS{NC: nc, Signer: signer}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := execute.Request{Tool: "charge", CallID: "r-0", IdempotencyKey: "k1", Arguments: json.RawMessage(`{"amount":5}`)}
	if st, err := ex.Status(ctx, req); err != nil || st.Known {
		t.Fatalf("before running: %+v %v, want known=false", st, err)
	}
	if rep, err := ex.Execute(ctx, req); err != nil || !rep.OK {
		t.Fatalf("execute: %+v %v", rep, err)
	}
	st, err := ex.Status(ctx, req)
	if err != nil || !st.Known || !st.OK || string(st.Result) != `{"charged":5}` {
		t.Fatalf("after running: %+v (%s) %v, want known ok with the result", st, st.Result, err)
	}
	if runs.Load() != 1 {
		t.Fatalf("the tool ran %d times; status queries must never run it", runs.Load())
	}
}

func TestNATS_status_from_an_executor_that_does_not_know_queries_is_no_answer(t *testing.T) {
	nc := replayConn(t, testenv.RunJetStream(t))
	// An executor that ignores the header and treats the query as a call.
	sub, err := nc.Subscribe("toolgate.exec.legacy", func(m *nats.Msg) { m.Respond([]byte(`{"ok":false,"error":"unexpected end of JSON input"}`)) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = (&execute.NATS{NC: nc}).Status(ctx, execute.Request{Tool: "legacy", IdempotencyKey: "k"})
	if !errors.Is(err, execute.ErrNoStatus) {
		t.Fatalf("error %v, want ErrNoStatus", err)
	}
	if _, err := (&execute.NATS{NC: nc}).Status(ctx, execute.Request{Tool: "nobody", IdempotencyKey: "k"}); !errors.Is(err, execute.ErrNoStatus) {
		t.Fatalf("no responder: %v, want ErrNoStatus", err)
	}
}
