package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

// These tests pin what docs/performance.md ("Fast batch publishing for the
// hops, measured") says of nats-server's fast batch publishing: the
// answers a worker's publisher would have to handle. Each drives the
// protocol by hand (fbReply) against the embedded server.

// fbUnknownBatch is JSBatchPublishUnknownBatchIDErr's error code.
const fbUnknownBatch = 10208

// fbProbe publishes fast batch messages with one batch id and reads the
// server's answers in order.
type fbProbe struct {
	t     *testing.T
	nc    *nats.Conn
	inbox string
	batch string
	flow  int
	sub   *nats.Subscription
}

func newProbe(t *testing.T, nc *nats.Conn, batch string, flow int) *fbProbe {
	t.Helper()
	p := &fbProbe{t: t, nc: nc, inbox: nats.NewInbox(), batch: batch, flow: flow}
	sub, err := nc.SubscribeSync(p.inbox + ".>")
	if err != nil {
		t.Fatal(err)
	}
	p.sub = sub
	return p
}

// pub sends message seq of the batch with op to subject, with msgID as
// its Nats-Msg-Id if not empty, and hdr's headers.
func (p *fbProbe) pub(subject string, seq uint64, op int, msgID string, hdr ...string) {
	p.t.Helper()
	m := nats.NewMsg(subject)
	m.Data = []byte("x")
	m.Reply = fbReply(p.inbox, p.batch, p.flow, seq, op)
	if msgID != "" {
		m.Header.Set(jetstream.MsgIDHeader, msgID)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		m.Header.Set(hdr[i], hdr[i+1])
	}
	if err := p.nc.PublishMsg(m); err != nil {
		p.t.Fatal(err)
	}
}

// next is the server's next answer.
func (p *fbProbe) next() fbResponse {
	p.t.Helper()
	m, err := p.sub.NextMsg(2 * time.Second)
	if err != nil {
		p.t.Fatalf("no answer: %v", err)
	}
	var r fbResponse
	if err := json.Unmarshal(m.Data, &r); err != nil {
		p.t.Fatalf("%q: %v", m.Data, err)
	}
	return r
}

// none checks that the server does not answer.
func (p *fbProbe) none() {
	p.t.Helper()
	if m, err := p.sub.NextMsg(200 * time.Millisecond); err == nil {
		p.t.Fatalf("unexpected answer %s", m.Data)
	}
}

func fbStream(t *testing.T, adjust ...func(*server.Options)) (*nats.Conn, jetstream.JetStream, jetstream.Stream) {
	t.Helper()
	s := testenv.RunJetStream(t, adjust...)
	nc, js := testenv.Connect(t, s)
	st, err := js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: "FB", Subjects: []string{"fb.>"}, Storage: jetstream.FileStorage, Duplicates: time.Minute, AllowBatchPublish: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return nc, js, st
}

func storedMsgs(t *testing.T, st jetstream.Stream) uint64 {
	t.Helper()
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

func wantAck(t *testing.T, r fbResponse, seq uint64) {
	t.Helper()
	if r.Type != "ack" || r.Seq != seq {
		t.Fatalf("got %+v, want a flow ack of seq %d", r, seq)
	}
}

func wantPubAck(t *testing.T, r fbResponse, count uint64) {
	t.Helper()
	if r.Type != "" || r.Error != nil || r.Count != count {
		t.Fatalf("got %+v, want the batch's PubAck of count %d", r, count)
	}
}

// A duplicate inside a batch is dropped without a word and counts as
// stored: the flow ack and the PubAck cover it (a redelivered input's
// output needs no special case there).
func TestFastBatch_a_duplicate_inside_a_batch_is_skipped_silently(t *testing.T) {
	nc, js, st := fbStream(t)
	if _, err := js.Publish(context.Background(), "fb.a", []byte("x"), jetstream.WithMsgID("dup")); err != nil {
		t.Fatal(err)
	}
	p := newProbe(t, nc, "b1", 2)
	p.pub("fb.a", 1, fbStart, "m1")
	wantAck(t, p.next(), 0) // the first message's answer: the flow
	p.pub("fb.a", 2, fbAppend, "dup")
	wantAck(t, p.next(), 2) // 2 of flow 2 "stored": the duplicate is covered
	p.pub("fb.a", 3, fbCommit, "m3")
	wantPubAck(t, p.next(), 3)
	p.none()
	if got := storedMsgs(t, st); got != 3 {
		t.Fatalf("%d stored, want 3 (the duplicate once)", got)
	}
}

// A duplicate first message is skipped as silently; a batch of one (its
// first message commits it) whose message is a duplicate is answered as a
// plain publish: a PubAck marked duplicate.
func TestFastBatch_a_duplicate_first_message_is_skipped_too(t *testing.T) {
	nc, js, st := fbStream(t)
	if _, err := js.Publish(context.Background(), "fb.a", []byte("x"), jetstream.WithMsgID("dup")); err != nil {
		t.Fatal(err)
	}
	p := newProbe(t, nc, "b2", 16)
	p.pub("fb.a", 1, fbStart, "dup")
	wantAck(t, p.next(), 0)
	p.pub("fb.a", 2, fbCommit, "m2")
	wantPubAck(t, p.next(), 2)
	one := newProbe(t, nc, "b2one", 16)
	one.pub("fb.a", 1, fbCommit, "dup")
	if r := one.next(); r.Type != "" || !r.Duplicate || r.Error != nil {
		t.Fatalf("got %+v, want a duplicate PubAck", r)
	}
	p.none()
	one.none()
	if got := storedMsgs(t, st); got != 2 {
		t.Fatalf("%d stored, want 2 (the duplicate once)", got)
	}
}

// Below the flow, nothing says a message is stored: a ping repeats the
// last flow ack (seq 0 here), not the last stored message; only a commit
// (here an end-of-batch without a message) answers for all of them.
func TestFastBatch_below_the_flow_only_a_commit_confirms(t *testing.T) {
	nc, _, st := fbStream(t)
	p := newProbe(t, nc, "b3", 16)
	p.pub("fb.a", 1, fbStart, "m1")
	wantAck(t, p.next(), 0)
	p.pub("fb.a", 2, fbAppend, "m2")
	p.pub("fb.a", 3, fbAppend, "m3")
	p.none()
	if got := storedMsgs(t, st); got != 3 {
		t.Fatalf("%d stored, want 3: each is stored as it arrives", got)
	}
	p.pub("fb.a", 3, fbPing, "")
	wantAck(t, p.next(), 0)
	p.pub("fb.a", 4, fbCommitEOB, "")
	wantPubAck(t, p.next(), 3)
}

// A batch belongs to one stream: its message to another stream's subject
// is refused there (that stream has no batch of that id), and the next
// message to the first stream finds a gap, which ends the batch there.
func TestFastBatch_a_batch_is_one_streams(t *testing.T) {
	nc, js, st := fbStream(t)
	other, err := js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: "FB2", Subjects: []string{"fb2.>"}, Storage: jetstream.FileStorage, AllowBatchPublish: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	p := newProbe(t, nc, "b4", 16)
	p.pub("fb.a", 1, fbStart, "m1")
	wantAck(t, p.next(), 0)
	p.pub("fb.b", 2, fbAppend, "m2") // another subject of the same stream: fine
	p.pub("fb2.a", 3, fbAppend, "m3")
	if r := p.next(); r.Error == nil || r.Error.ErrCode != fbUnknownBatch {
		t.Fatalf("got %+v, want unknown batch id from the other stream", r)
	}
	p.pub("fb.a", 4, fbAppend, "m4")
	if r := p.next(); r.Type != "gap" || r.LastSeq != 3 || r.Seq != 4 {
		t.Fatalf("got %+v, want a gap (expected 3, got 4)", r)
	}
	wantPubAck(t, p.next(), 2)
	if a, b := storedMsgs(t, st), storedMsgs(t, other); a != 2 || b != 0 {
		t.Fatalf("stored %d and %d, want 2 and 0", a, b)
	}
}

// A batch idle for the server's batch timeout (10 s by default,
// jetstream.limits.max_batch_timeout) is dropped without a word; the next
// message is refused as of an unknown batch.
func TestFastBatch_an_idle_batch_is_dropped(t *testing.T) {
	nc, _, st := fbStream(t, func(o *server.Options) { o.JetStreamLimits.MaxBatchTimeout = 300 * time.Millisecond })
	p := newProbe(t, nc, "b5", 16)
	p.pub("fb.a", 1, fbStart, "m1")
	wantAck(t, p.next(), 0)
	p.none()
	time.Sleep(400 * time.Millisecond)
	p.pub("fb.a", 2, fbAppend, "m2")
	if r := p.next(); r.Error == nil || r.Error.ErrCode != fbUnknownBatch {
		t.Fatalf("got %+v, want unknown batch id", r)
	}
	if got := storedMsgs(t, st); got != 1 {
		t.Fatalf("%d stored, want 1", got)
	}
}

// An expected-sequence header is checked per message; a failed check
// sends an error for that message and ends the batch (gap "fail"): the
// PubAck covers the messages before it.
func TestFastBatch_a_failed_expected_sequence_ends_the_batch(t *testing.T) {
	nc, _, st := fbStream(t)
	p := newProbe(t, nc, "b6", 16)
	p.pub("fb.a", 1, fbStart, "m1", "Nats-Expected-Last-Subject-Sequence", "0")
	wantAck(t, p.next(), 0)
	p.pub("fb.a", 2, fbAppend, "m2", "Nats-Expected-Last-Subject-Sequence", "1")
	p.pub("fb.a", 3, fbAppend, "m3", "Nats-Expected-Last-Subject-Sequence", "99")
	if r := p.next(); r.Type != "err" || r.Seq != 3 || r.Error == nil {
		t.Fatalf("got %+v, want an error for message 3", r)
	}
	wantPubAck(t, p.next(), 2)
	p.pub("fb.a", 4, fbAppend, "m4")
	if r := p.next(); r.Error == nil || r.Error.ErrCode != fbUnknownBatch {
		t.Fatalf("got %+v, want unknown batch id", r)
	}
	if got := storedMsgs(t, st); got != 2 {
		t.Fatalf("%d stored, want 2", got)
	}
}

// A stream leader change between messages keeps the batch: the followers
// track each batch's stored sequence, and the new leader sends a flow ack
// for it (fastBatchReset), so the publisher learns where it stands and
// goes on. (A message the old leader got after it stepped down is dropped
// without an answer: the next one finds a gap, which ends the batch.)
func TestFastBatch_a_leader_change_keeps_the_batch(t *testing.T) {
	servers := testenv.RunJetStreamCluster(t)
	nc, js := testenv.Connect(t, servers[0])
	ctx := context.Background()
	var st jetstream.Stream
	testenv.Eventually(t, 30*time.Second, 200*time.Millisecond, func() (err error) { // until every peer is up
		st, err = js.CreateStream(ctx, jetstream.StreamConfig{
			Name: "FB", Subjects: []string{"fb.>"}, Storage: jetstream.FileStorage, Replicas: 3, AllowBatchPublish: true,
		})
		return err
	})
	p := newProbe(t, nc, "b7", 16)
	p.pub("fb.a", 1, fbStart, "m1")
	wantAck(t, p.next(), 0)
	p.pub("fb.a", 2, fbAppend, "m2")
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := storedMsgs(t, st); n != 2 {
			return fmt.Errorf("%d stored", n)
		}
		return nil
	})
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := info.Cluster.Leader
	if _, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN.FB", nil, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, 50*time.Millisecond, func() error {
		info, err := st.Info(ctx)
		if err != nil {
			return err
		}
		if info.Cluster.Leader == "" || info.Cluster.Leader == before {
			return fmt.Errorf("leader %q", info.Cluster.Leader)
		}
		return nil
	})
	wantAck(t, p.next(), 2) // the new leader: 1 and 2 are stored
	p.pub("fb.a", 3, fbCommit, "m3")
	wantPubAck(t, p.next(), 3)
	if got := storedMsgs(t, st); got != 3 {
		t.Fatalf("%d stored, want 3", got)
	}
}

// A message larger than the stream's max_msg_size is refused before the
// batch counts it: its refusal (a PubAck with the error, on its own reply
// subject, so the publisher knows which output) comes at once, and the
// next message finds a gap, which ends the batch. A worker can still
// dead-letter the input as output_too_large.
func TestFastBatch_a_too_large_message_is_refused_and_ends_the_batch(t *testing.T) {
	s := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, s)
	st, err := js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: "FB", Subjects: []string{"fb.>"}, Storage: jetstream.FileStorage, MaxMsgSize: 512, AllowBatchPublish: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	p := newProbe(t, nc, "b8", 16)
	p.pub("fb.a", 1, fbStart, "m1")
	wantAck(t, p.next(), 0)
	big := nats.NewMsg("fb.a")
	big.Data = make([]byte, 1024)
	big.Reply = fbReply(p.inbox, p.batch, p.flow, 2, fbAppend)
	if err := nc.PublishMsg(big); err != nil {
		t.Fatal(err)
	}
	m, err := p.sub.NextMsg(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r fbResponse
	if err := json.Unmarshal(m.Data, &r); err != nil {
		t.Fatal(err)
	}
	if r.Type != "" || r.Error == nil || r.Error.ErrCode != 10054 || m.Subject != big.Reply {
		t.Fatalf("got %+v on %s, want the size refusal on message 2's reply subject", r, m.Subject)
	}
	p.pub("fb.a", 3, fbAppend, "m3")
	if r := p.next(); r.Type != "gap" || r.LastSeq != 2 || r.Seq != 3 {
		t.Fatalf("got %+v, want a gap (expected 2, got 3)", r)
	}
	wantPubAck(t, p.next(), 1)
	if got := storedMsgs(t, st); got != 1 {
		t.Fatalf("%d stored, want 1", got)
	}
}
