package toolserver

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
)

// chargeTool serves "charge" on its own connection to s (an executor
// process), counting runs in runs; stop ends the process: its service and
// its connection, and with them all it held in memory.
func chargeTool(t *testing.T, s *server.Server, pub []ed25519.PublicKey, runs *atomic.Int32, opts ...Option) (stop func()) {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(nc, "billing", "1.0.0", append([]Option{PublicKey(pub...)}, opts...)...)
	if err != nil {
		nc.Close()
		t.Fatal(err)
	}
	if err := srv.Handle("charge", func(ctx context.Context, c Call) (any, error) {
		n := runs.Add(1)
		return map[string]any{"charge_id": "ch_" + strconv.Itoa(int(n))}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// The endpoint's subscription is the server's before a request comes:
	// otherwise a request sent on another connection right after (a
	// replay after a restart) reaches only capture's subscriber, which
	// never answers, and times out (seen under load in make test).
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return func() { _ = srv.Stop(); nc.Close() }
}

// capture records the requests sent to tool, as anyone who may read the
// executor subjects would.
func capture(t *testing.T, nc *nats.Conn, tool string) <-chan *nats.Msg {
	t.Helper()
	ch := make(chan *nats.Msg, 8)
	sub, err := nc.ChanSubscribe(wire.Exec(tool), ch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return ch
}

// resend sends a captured request again, headers and body as they were.
func resend(t *testing.T, nc *nats.Conn, m *nats.Msg) *nats.Msg {
	t.Helper()
	again := nats.NewMsg(m.Subject)
	again.Data = m.Data
	for k, v := range m.Header {
		again.Header[k] = append([]string(nil), v...)
	}
	resp, err := nc.RequestMsg(again, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestServer_a_captured_request_never_runs_twice_across_restarts: a request
// the execute gate signed and sent, captured on the broker and sent again
// after the executor restarted (a new process state, the same NATS and
// bucket), gets the first run's answer and does not run the tool again; the
// status query answers from the record after the restart too.
func TestServer_a_captured_request_never_runs_twice_across_restarts(t *testing.T) {
	s := testenv.RunJetStream(t)
	nc := replayConn(t, s)
	signer := testSigner(t)
	var runs atomic.Int32
	stop := chargeTool(t, s, signer.Public(), &runs)
	sniffed := capture(t, nc, "charge")

	ex := &execute.NATS{NC: nc, Signer: signer}
	req := execute.Request{Tool: "charge", CallID: "resp-1-0", IdempotencyKey: strings.Repeat("ab", 32), Arguments: json.RawMessage(`{"amount_cents":500}`)}
	rep, err := ex.Execute(context.Background(), req)
	if err != nil || !rep.OK || runs.Load() != 1 {
		t.Fatalf("the genuine request: %+v %v (ran %d)", rep, err, runs.Load())
	}
	var captured *nats.Msg
	select {
	case captured = <-sniffed:
	case <-time.After(5 * time.Second):
		t.Fatal("nothing captured")
	}
	if captured.Header.Get(wire.HeaderSignature) == "" {
		t.Fatal("the captured request is not signed")
	}

	stop() // the executor restarts: nothing it held in memory survives
	stop = chargeTool(t, s, signer.Public(), &runs)
	defer stop()

	resp := resend(t, nc, captured)
	if n := runs.Load(); n != 1 {
		t.Fatalf("the captured request ran the tool again after a restart: %d runs, reply %s", n, resp.Data)
	}
	if string(resp.Data) != string(`{"ok":true,"result":{"charge_id":"ch_1"}}`) || resp.Header.Get(wire.HeaderExecRecord) != wire.RecordStored {
		t.Fatalf("reply %s (%s %q), want the first run's answer, stored", resp.Data, wire.HeaderExecRecord, resp.Header.Get(wire.HeaderExecRecord))
	}
	// The execute gate's own retry of the call is answered the same way.
	if rep, err := ex.Execute(context.Background(), req); err != nil || string(rep.Result) != `{"charge_id":"ch_1"}` || runs.Load() != 1 {
		t.Fatalf("the gate's retry: %+v %v (ran %d)", rep, err, runs.Load())
	}
	// outcome_unknown reconciliation works across the restart.
	st, err := ex.Status(context.Background(), req)
	if err != nil || !st.Known || !st.OK || string(st.Result) != `{"charge_id":"ch_1"}` {
		t.Fatalf("status after the restart: %+v %v, want known with the first answer", st, err)
	}
}

// TestServer_a_request_taken_and_cut_short_is_not_run_again: a record that
// says running (the executor died mid-run) makes a second delivery an
// unknown outcome for the execute gate, never a second run, and the status
// query does not claim to know.
func TestServer_a_request_taken_and_cut_short_is_not_run_again(t *testing.T) {
	s := testenv.RunJetStream(t)
	nc := replayConn(t, s)
	signer := testSigner(t)
	req := execute.Request{Tool: "charge", CallID: "resp-2-0", IdempotencyKey: strings.Repeat("cd", 32), Arguments: json.RawMessage(`{"amount_cents":7}`)}
	// What a run cut short leaves behind.
	if _, _, taken, err := take(replayBucket(t, nc), "charge", Call{ID: req.CallID, IdempotencyKey: req.IdempotencyKey}); err != nil || !taken {
		t.Fatalf("take: %v %v", taken, err)
	}
	var runs atomic.Int32
	defer chargeTool(t, s, signer.Public(), &runs)()
	ex := &execute.NATS{NC: nc, Signer: signer}
	if _, err := ex.Execute(context.Background(), req); !errors.Is(err, execute.ErrUnknown) {
		t.Fatalf("error %v, want ErrUnknown", err)
	}
	if st, err := ex.Status(context.Background(), req); err != nil || st.Known {
		t.Fatalf("status: %+v %v, want known false", st, err)
	}
	if runs.Load() != 0 {
		t.Fatal("the tool ran")
	}
}

// TestServer_refuses_an_expired_request_and_an_edited_time: a request signed
// with a time past its lifetime (60 s by default) is refused, and so is a
// captured one whose issue time and expiry were moved forward, and one with
// its expiry stripped where the expiry is required; the tool never runs.
func TestServer_refuses_an_expired_request_and_an_edited_time(t *testing.T) {
	s := testenv.RunJetStream(t)
	nc := replayConn(t, s)
	k, signer := testKeys(t)
	var runs atomic.Int32
	defer chargeTool(t, s, signer.Public(), &runs)()
	const args = `{"amount_cents":500}`
	key := strings.Repeat("ef", 32)
	header := func(sig string) nats.Header {
		h := nats.Header{}
		h.Set(wire.HeaderCallID, "resp-3-0")
		h.Set(wire.HeaderIdemKey, key)
		h.Set(wire.HeaderSignature, sig)
		return h
	}
	r := wire.ExecRequest{CallID: "resp-3-0", IdempotencyKey: key, Tool: "charge", Body: []byte(args)}
	// Captured two minutes ago: its lifetime is over (it was within the old
	// five-minute tolerance).
	old := time.Now().Add(-2 * time.Minute)
	v1, err := wire.SignExec(r, old, k)
	if err != nil {
		t.Fatal(err)
	}
	refusedReply(t, request(t, nc, "charge", args, header(v1)), wire.RefusedStale)
	v2, err := wire.SignExecUntil(r, old, old.Add(wire.DefaultExecLifetime), k)
	if err != nil {
		t.Fatal(err)
	}
	refusedReply(t, request(t, nc, "charge", args, header(v2)), wire.RefusedStale)
	// The same captured header with its times moved to now.
	now := time.Now()
	edited := strings.Replace(v2, "t="+strconv.FormatInt(old.Unix(), 10), "t="+strconv.FormatInt(now.Unix(), 10), 1)
	edited = strings.Replace(edited, "e="+strconv.FormatInt(old.Add(wire.DefaultExecLifetime).Unix(), 10), "e="+strconv.FormatInt(now.Add(wire.DefaultExecLifetime).Unix(), 10), 1)
	if edited == v2 {
		t.Fatal("the edit changed nothing")
	}
	refusedReply(t, request(t, nc, "charge", args, header(edited)), wire.RefusedInvalid)
	if runs.Load() != 0 {
		t.Fatalf("the tool ran %d times", runs.Load())
	}

	// An executor that requires the expiry refuses a header without it.
	var strictRuns atomic.Int32
	nc2, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc2.Close()
	srv, err := New(nc2, "strict", "1.0.0", PublicKey(signer.Public()...), RequireExpiry())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if err := srv.Handle("strict_charge", func(context.Context, Call) (any, error) { strictRuns.Add(1); return nil, nil }); err != nil {
		t.Fatal(err)
	}
	r.Tool = "strict_charge"
	fresh, err := wire.SignExec(r, time.Now(), k)
	if err != nil {
		t.Fatal(err)
	}
	refusedReply(t, request(t, nc, "strict_charge", args, header(fresh)), wire.RefusedMalformed)
	if rep, err := (&execute.NATS{NC: nc, Signer: signer}).Execute(context.Background(), execute.Request{Tool: "strict_charge", CallID: "resp-3-0", IdempotencyKey: key, Arguments: []byte(args)}); err != nil || !rep.OK || strictRuns.Load() != 1 {
		t.Fatalf("the execute gate's request: %+v %v (ran %d)", rep, err, strictRuns.Load())
	}
}

// TestServer_refuses_to_start_without_its_records_bucket: an executor that
// cannot keep its records says so, rather than serving without them.
func TestServer_refuses_to_start_without_its_records_bucket(t *testing.T) {
	nc, _ := testenv.Connect(t, testenv.RunJetStream(t))
	_, err := New(nc, "billing", "1.0.0", PublicKey(testSigner(t).Public()...))
	if err == nil || !strings.Contains(err.Error(), wire.ExecReplayBucket) || !strings.Contains(err.Error(), "streams apply") {
		t.Fatalf("New without the bucket: %v, want an error naming it and how to make it", err)
	}
}
