package ingest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// parallelCalls is a recorded stream with two calls.
func parallelCalls(t *testing.T) streamFixture {
	t.Helper()
	return loadStreamFixture(t, provider.OpenAIChat, "openai-gpt-4o-parallel-tool-calls.stream.sse")[0]
}

// publishOn publishes evs of response rid on subject, as a producer does.
func publishOn(t *testing.T, js jetstream.JetStream, subject, rid, prov string, evs []event) {
	t.Helper()
	for _, ev := range evs {
		m := &nats.Msg{Subject: subject, Data: ev.data, Header: nats.Header{}}
		m.Header.Set(streams.HeaderProvider, prov)
		m.Header.Set(streams.HeaderResponseID, rid)
		m.Header.Set(streams.HeaderSeq, strconv.Itoa(ev.seq))
		m.Header.Set(nats.MsgIdHdr, fmt.Sprintf("%s:%d", rid, ev.seq))
		if _, err := js.PublishMsg(context.Background(), m); err != nil {
			t.Fatalf("publish on %s: %v", subject, err)
		}
	}
}

// sharedIn is a response id the shared stream subject's mapping puts in
// partition k of p.
func sharedIn(t *testing.T, prefix string, p, k int) string {
	t.Helper()
	for i := range 1000 {
		if rid := fmt.Sprint(prefix, i); streams.ResponsePartition("", rid, p) == k {
			return rid
		}
	}
	t.Fatalf("no id in partition %d of %d", k, p)
	return ""
}

// With P = 3 a tenant's streams and the shared streams are stored in the
// partition of their id, and a tenant's batch responses in its tenant's:
// accumulate reads every partition, assembles each stream from its own
// partition and runs each call once.
func TestInPartitions_streams_and_batches_in_each_partition_run_once(t *testing.T) {
	r, _ := claimedRigP(t, 3)
	f := parallelCalls(t)
	var rids []string
	for k := range 3 {
		rid := ridIn(t, fmt.Sprint("s", k, "-"), 3, k)
		publishOn(t, r.js, wire.InTenantStream("acme", rid), rid, f.provider, inOrder(f.events))
		shared := sharedIn(t, fmt.Sprint("h", k, "-"), 3, k)
		publishOn(t, r.js, streams.InStream(shared), shared, f.provider, inOrder(f.events))
		rids = append(rids, rid, shared)
	}
	batch := weather("b-1")
	batch.Priority = wire.PriorityBatch
	if err := r.producerOf("acme").PublishResponse(context.Background(), batch, weatherIn("Oslo")); err != nil {
		t.Fatal(err)
	}
	for _, rid := range rids {
		r.parsedN(t, rid, len(f.want.Calls))
	}
	r.parsedN(t, batch.ResponseID, 1)
	r.settledAll(t)
	for _, rid := range rids {
		checkParsed(t, r.parsedFor(rid), f.want)
	}
	if n := len(r.parsedFor(batch.ResponseID)); n != 1 {
		t.Fatalf("the batch response: %d envelopes at parse, want 1", n)
	}
	for k := 1; k < 3; k++ {
		if n := r.msgs(t, streams.InputStream(k)); n == 0 {
			t.Fatalf("%s holds nothing: the streams were not partitioned", streams.InputStream(k))
		}
	}
	b := streams.BatchPartition("acme", 3)
	in, err := r.js.Stream(context.Background(), streams.InputStream(b))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.GetLastMsgForSubject(context.Background(), wire.InTenantBatch("acme")+"."+strconv.Itoa(b)); err != nil {
		t.Fatalf("the batch response is not in partition %d: %v", b, err)
	}
}

// A producer may publish a stream's events and its batch responses with a
// partition (nats-server checks permissions on the mapped subject): an
// event or a batch response stored where the mapping would not put it is
// refused (bad_subject, a dead letter), is never read into its stream, and
// nothing of it runs.
func TestInPartitions_input_in_another_partition_is_refused(t *testing.T) {
	r, _ := claimedRigP(t, 3)
	f := parallelCalls(t)
	rid := ridIn(t, "w-", 3, 1)
	evs := inOrder(f.events)
	// A forged first event, other content, in partition 2: if it were
	// read into the stream, the stream would be a conflict.
	forged := evs[0]
	forged.data = []byte(`{"forged":true}`)
	publishOn(t, r.js, wire.InTenantStream("acme", rid)+".2", rid, f.provider, []event{forged})
	publishOn(t, r.js, wire.InTenantStream("acme", rid), rid, f.provider, evs)
	wrong := (streams.BatchPartition("acme", 3) + 1) % 3
	m := &nats.Msg{Subject: wire.InTenantBatch("acme") + "." + strconv.Itoa(wrong), Header: nats.Header{}, Data: weatherIn("Evil")}
	m.Header.Set(streams.HeaderProvider, "openai-chat")
	m.Header.Set(streams.HeaderResponseID, "evil-batch")
	if _, err := r.js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	waitDeadLetters(t, r, CodeBadSubject, 2)
	r.parsedN(t, rid, len(f.want.Calls))
	r.settledAll(t)
	checkParsed(t, r.parsedFor(rid), f.want)
	if n := len(r.parsedFor("evil-batch")); n != 0 {
		t.Fatalf("the batch response in another partition ran: %d envelopes", n)
	}
}

// Raising P from 1 to 3 while a stream is open: its first events are in
// TOOLGATE_IN unsuffixed (P = 1), the rest where P = 3 puts its id
// (partition 2); accumulate reads both for the claim period after the
// change, merges them by Toolgate-Seq, and runs each call once.
func TestInPartitions_a_stream_open_across_raising_P_runs_once(t *testing.T) {
	r, _ := claimedRigP(t, 1)
	f := parallelCalls(t)
	rid := ridIn(t, "o-", 3, 2)
	evs := inOrder(f.events)
	half := len(evs) / 2
	publishOn(t, r.js, wire.InTenantStream("acme", rid), rid, f.provider, evs[:half])
	testenv.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error { // the first half handled at P = 1
		return testenv.ConsumerIdle(context.Background(), r.js, streams.StreamIn, streams.Accumulate)
	})
	raise(t, r)
	publishOn(t, r.js, wire.InTenantStream("acme", rid), rid, f.provider, evs[half:])
	if n := r.msgs(t, streams.InputStream(2)); n != uint64(len(evs)-half) {
		t.Fatalf("%s holds %d events, want the %d after the change", streams.InputStream(2), n, len(evs)-half)
	}
	r.parsedN(t, rid, len(f.want.Calls))
	r.settledAll(t)
	checkParsed(t, r.parsedFor(rid), f.want)
	if n := len(r.deadLetters(t, streams.DLQ(streams.Accumulate, CodeBadSubject))); n != 0 {
		t.Fatalf("%d events refused as misplaced across the change", n)
	}
}
