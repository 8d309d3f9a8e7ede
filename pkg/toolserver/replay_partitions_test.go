package toolserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// applyReplayBuckets creates the executors' buckets as `toolgate streams
// apply` does for a deployment of p partitions, and names them.
func applyReplayBuckets(t *testing.T, js jetstream.JetStream, p int) []string {
	t.Helper()
	s := streams.DefaultSettings()
	s.Fair.Partitions = p
	var names []string
	for _, cfg := range s.BucketConfigs() {
		if _, ok := wire.ExecReplayBucketPartition(cfg.Bucket); ok {
			if _, err := js.CreateOrUpdateKeyValue(context.Background(), cfg); err != nil {
				t.Fatal(err)
			}
			names = append(names, cfg.Bucket)
		}
	}
	return names
}

// recorded reports whether bucket holds the record of tool's key.
func recorded(t *testing.T, js jetstream.JetStream, bucket, tool, key string) bool {
	t.Helper()
	kv, err := js.KeyValue(context.Background(), bucket)
	if err != nil {
		t.Fatal(err)
	}
	_, err = kv.Get(context.Background(), recordKey(tool, key))
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// The request names partition 2 (signed); the executor records it in
// partition 2's bucket and nowhere else, and the status query naming
// partition 2 answers from there (one naming partition 0 knows nothing).
func TestServer_records_a_request_in_the_partition_it_names(t *testing.T) {
	s := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, s)
	if got := applyReplayBuckets(t, js, 3); len(got) != 3 {
		t.Fatalf("P = 3 applied buckets %q, want 3", got)
	}
	signer := testSigner(t)
	var runs atomic.Int32
	defer chargeTool(t, s, signer.Public(), &runs)()
	sniffed := capture(t, nc, "charge")
	ex := &execute.NATS{NC: nc, Signer: signer}
	req := execute.Request{Tool: "charge", CallID: "resp-7-0", IdempotencyKey: strings.Repeat("7a", 32), Arguments: json.RawMessage(`{"amount_cents":9}`), ReplayPartition: 2}
	if rep, err := ex.Execute(context.Background(), req); err != nil || !rep.OK || runs.Load() != 1 {
		t.Fatalf("the request: %+v %v (ran %d)", rep, err, runs.Load())
	}
	if m := <-sniffed; m.Header.Get(wire.HeaderReplayPartition) != "2" {
		t.Fatalf("request headers %v, want %s: 2", m.Header, wire.HeaderReplayPartition)
	}
	for p, want := range []bool{false, false, true} {
		if got := recorded(t, js, wire.ExecReplayPartitionBucket(p), "charge", req.IdempotencyKey); got != want {
			t.Errorf("partition %d holds the record: %v, want %v", p, got, want)
		}
	}
	if st, err := ex.Status(context.Background(), req); err != nil || !st.Known || string(st.Result) != `{"charge_id":"ch_1"}` {
		t.Fatalf("status in partition 2: %+v %v, want known", st, err)
	}
	zero := req
	zero.ReplayPartition = 0
	if st, err := ex.Status(context.Background(), zero); err != nil || st.Known {
		t.Fatalf("status in partition 0: %+v %v, want unknown", st, err)
	}
	<-sniffed // the status queries
	<-sniffed
	// Partition 0 is named by no header, and recorded where it always was.
	zero.CallID, zero.IdempotencyKey = "resp-7-1", strings.Repeat("7b", 32)
	if rep, err := ex.Execute(context.Background(), zero); err != nil || !rep.OK {
		t.Fatalf("partition 0: %+v %v", rep, err)
	}
	if m := <-sniffed; len(m.Header.Values(wire.HeaderReplayPartition)) != 0 {
		t.Fatalf("a partition 0 request has headers %v, want no %s", m.Header, wire.HeaderReplayPartition)
	}
	if !recorded(t, js, wire.ExecReplayBucket, "charge", zero.IdempotencyKey) {
		t.Fatal("partition 0's request is not recorded in " + wire.ExecReplayBucket)
	}
}

// A request signed under P = 3 for partition 2, captured and sent again
// to another replica, and again after the executor restarted under a
// P = 1 deployment, is answered from partition 2's record and never runs
// twice; with its partition header removed or changed it is refused.
func TestServer_a_captured_partitioned_request_never_runs_twice_across_P(t *testing.T) {
	s := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, s)
	applyReplayBuckets(t, js, 3)
	signer := testSigner(t)
	var runs atomic.Int32
	stop := chargeTool(t, s, signer.Public(), &runs)
	replica := chargeTool(t, s, signer.Public(), &runs)
	sniffed := capture(t, nc, "charge")
	ex := &execute.NATS{NC: nc, Signer: signer}
	req := execute.Request{Tool: "charge", CallID: "resp-8-0", IdempotencyKey: strings.Repeat("8b", 32), Arguments: json.RawMessage(`{"amount_cents":8}`), ReplayPartition: 2}
	if rep, err := ex.Execute(context.Background(), req); err != nil || !rep.OK {
		t.Fatalf("the request: %+v %v", rep, err)
	}
	var captured *nats.Msg
	select {
	case captured = <-sniffed:
	case <-time.After(5 * time.Second):
		t.Fatal("nothing captured")
	}
	for range 4 { // the queue group spreads them over both replicas
		if resp := resend(t, nc, captured); resp.Header.Get(wire.HeaderExecRecord) != wire.RecordStored {
			t.Fatalf("replayed: %s (%v), want the stored answer", resp.Data, resp.Header)
		}
	}
	stop()
	replica()
	applyReplayBuckets(t, js, 1) // the deployment now runs with P = 1
	defer chargeTool(t, s, signer.Public(), &runs)()
	resp := resend(t, nc, captured)
	if runs.Load() != 1 || resp.Header.Get(wire.HeaderExecRecord) != wire.RecordStored || string(resp.Data) != `{"ok":true,"result":{"charge_id":"ch_1"}}` {
		t.Fatalf("replayed under P = 1: %s (%v), ran %d; want the stored answer, one run", resp.Data, resp.Header, runs.Load())
	}
	for _, edit := range []func(nats.Header){
		func(h nats.Header) { h.Del(wire.HeaderReplayPartition) },
		func(h nats.Header) { h.Set(wire.HeaderReplayPartition, "1") },
	} {
		m := nats.NewMsg(captured.Subject)
		m.Data = captured.Data
		for k, v := range captured.Header {
			m.Header[k] = append([]string(nil), v...)
		}
		edit(m.Header)
		resp, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Header.Get(wire.HeaderSignatureRefused); got != wire.RefusedInvalid {
			t.Errorf("partition header %q: refused %q (%s), want %q", m.Header.Get(wire.HeaderReplayPartition), got, resp.Data, wire.RefusedInvalid)
		}
	}
	if runs.Load() != 1 {
		t.Fatalf("ran %d times, want 1", runs.Load())
	}
}

// A partition header that is not a partition (0, 64, -1, text, two of
// them) is refused before anything else and never runs, even unsigned
// on an Insecure server.
func TestServer_refuses_a_malformed_replay_partition(t *testing.T) {
	s := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, s)
	applyReplayBuckets(t, js, 3)
	signer := testSigner(t)
	var runs, loose atomic.Int32
	defer chargeTool(t, s, signer.Public(), &runs)()
	for _, values := range [][]string{{"0"}, {"64"}, {"-1"}, {"x"}, {"02"}, {"1", "2"}} {
		m := nats.NewMsg(wire.Exec("charge"))
		m.Data = []byte(`{"amount_cents":1}`)
		m.Header.Set(wire.HeaderCallID, "resp-9-0")
		m.Header.Set(wire.HeaderIdemKey, strings.Repeat("9c", 32))
		m.Header[wire.HeaderReplayPartition] = values
		sig, err := signer.Sign(wire.ExecRequest{CallID: "resp-9-0", IdempotencyKey: strings.Repeat("9c", 32), Tool: "charge", Body: m.Data, ReplayPartition: 1}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		m.Header.Set(wire.HeaderSignature, sig)
		resp, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Header.Get(wire.HeaderSignatureRefused); got != wire.RefusedMalformed {
			t.Errorf("partition %q: refused %q (%s), want %q", values, got, resp.Data, wire.RefusedMalformed)
		}
	}
	if runs.Load() != 0 {
		t.Fatalf("ran %d times", runs.Load())
	}
	// Insecure skips the signature, never the partition's check.
	insecure, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer insecure.Close()
	srv, err := New(insecure, "loose", "1.0.0", Insecure())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop() }()
	if err := srv.Handle("loose_charge", func(context.Context, Call) (any, error) { loose.Add(1); return "ok", nil }); err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg(wire.Exec("loose_charge"))
	m.Data = []byte(`{}`)
	m.Header.Set(wire.HeaderIdemKey, strings.Repeat("9d", 32))
	m.Header.Set(wire.HeaderReplayPartition, "99")
	resp, err := nc.RequestMsg(m, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get(wire.HeaderSignatureRefused) != wire.RefusedMalformed || loose.Load() != 0 {
		t.Fatalf("insecure, partition 99: %s (%v), ran %d", resp.Data, resp.Header, loose.Load())
	}
}

// A request naming a partition whose bucket does not exist is not run
// (unavailable: the execute gate retries it); once the bucket exists, the
// next one is recorded there.
func TestServer_a_partition_without_its_bucket_is_unavailable_not_run(t *testing.T) {
	s := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, s)
	applyReplayBuckets(t, js, 2)
	signer := testSigner(t)
	var runs atomic.Int32
	defer chargeTool(t, s, signer.Public(), &runs)()
	ex := &execute.NATS{NC: nc, Signer: signer}
	req := execute.Request{Tool: "charge", CallID: "resp-10-0", IdempotencyKey: strings.Repeat("ae", 32), Arguments: json.RawMessage(`{"amount_cents":3}`), ReplayPartition: 2}
	if _, err := ex.Execute(context.Background(), req); !errors.Is(err, execute.ErrNotRun) || runs.Load() != 0 {
		t.Fatalf("partition 2 without its bucket: %v (ran %d), want ErrNotRun", err, runs.Load())
	}
	if _, err := ex.Status(context.Background(), req); !errors.Is(err, execute.ErrNoStatus) {
		t.Fatalf("status in partition 2 without its bucket: %v, want ErrNoStatus", err)
	}
	applyReplayBuckets(t, js, 3) // P raised: the bucket appears
	if rep, err := ex.Execute(context.Background(), req); err != nil || !rep.OK || runs.Load() != 1 {
		t.Fatalf("once the bucket exists: %+v %v (ran %d)", rep, err, runs.Load())
	}
	if !recorded(t, js, wire.ExecReplayPartitionBucket(2), "charge", req.IdempotencyKey) {
		t.Fatal("not recorded in partition 2")
	}
}

// With ReplayBucket every partition's records go to that one bucket.
func TestServer_ReplayBucket_holds_every_partition(t *testing.T) {
	s := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, s)
	kv, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	signer := testSigner(t)
	var runs atomic.Int32
	defer chargeTool(t, s, signer.Public(), &runs, ReplayBucket(kv))()
	ex := &execute.NATS{NC: nc, Signer: signer}
	for i, p := range []int{0, 5, 63} {
		req := execute.Request{Tool: "charge", CallID: "resp-11-" + string(rune('0'+i)), IdempotencyKey: strings.Repeat(string(rune('a'+i))+"f", 32), Arguments: json.RawMessage(`{}`), ReplayPartition: p}
		if rep, err := ex.Execute(context.Background(), req); err != nil || !rep.OK {
			t.Fatalf("partition %d: %+v %v", p, rep, err)
		}
		if !recorded(t, js, "elsewhere", "charge", req.IdempotencyKey) {
			t.Errorf("partition %d: not recorded in the ReplayBucket", p)
		}
	}
}
