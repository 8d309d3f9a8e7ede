package stage

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/ingest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// Priority at accumulate (issue 37): a tenant's batch responses come on its
// batch subject, toolgate.in.t.<tenant>.batch, which a durable of their own
// (accumulate_<index>b) reads beside the lane's interactive one.

// publishOn publishes a response body on subject with headers extra, as a
// producer would (message id: its response id).
func (p *pipe) publishOn(subject, rid string, body []byte, extra ...string) {
	p.t.Helper()
	m := nats.NewMsg(subject)
	m.Data = body
	m.Header.Set(streams.HeaderProvider, "openai-chat")
	m.Header.Set(streams.HeaderResponseID, rid)
	m.Header.Set(nats.MsgIdHdr, rid)
	for i := 0; i+1 < len(extra); i += 2 {
		m.Header.Set(extra[i], extra[i+1])
	}
	if _, err := p.js.PublishMsg(p.ctx, m); err != nil {
		p.t.Fatal(err)
	}
}

func (r fairRig) batchInvoice(rid, tenant string, extra ...string) {
	r.t.Helper()
	r.publishOn(streams.InTenantBatch(tenant), rid, chat(rid, "create_invoice", validInvoice, "tool_calls"), extra...)
}

// durableIdle waits until durable of TOOLGATE_IN holds nothing.
func (r fairRig) durableIdle(durables ...string) {
	r.t.Helper()
	testenv.Eventually(r.t, 30*time.Second, 20*time.Millisecond, func() error {
		for _, d := range durables {
			c, err := r.js.Consumer(r.ctx, streams.StreamIn, d)
			if err != nil {
				return err
			}
			info, err := c.Info(r.ctx)
			if err != nil {
				return err
			}
			if n := info.NumPending + uint64(info.NumAckPending); n != 0 {
				return fmt.Errorf("%s still holds %d inputs", d, n)
			}
		}
		return nil
	})
}

// A tenant's interactive responses pass accumulate while its own batch
// backlog, published before them, still waits there. Before, its lane's
// one durable read the tenant's inputs in stream order (the priority is a
// header, which no filter reads), so every batch call reached parse first.
func TestFair_accumulate_takes_interactive_past_its_tenants_batch_backlog(t *testing.T) {
	r := startFairRig(t)
	const batch, inter = 1500, 5
	for i := range batch {
		r.batchInvoice(fmt.Sprintf("batch-%d", i), "quiet", streams.HeaderPriority, streams.PriorityBatch)
	}
	for i := range inter {
		r.invoice(fmt.Sprintf("inter-%d", i), "quiet", streams.HeaderPriority, streams.PriorityInteractive)
	}
	r.run(streams.Accumulate)
	r.waitPending("parse_1b", batch) // each exactly once
	r.waitPending("parse_1i", inter)
	gates, err := r.js.Stream(r.ctx, streams.LaneStream(streams.Parse)) // parse's lanes' own stream
	if err != nil {
		t.Fatal(err)
	}
	lastInter, err := gates.GetLastMsgForSubject(r.ctx, streams.GateLane(streams.Parse, "1i"))
	if err != nil {
		t.Fatal(err)
	}
	// A batch hop stored after the last interactive one.
	if _, err := gates.GetMsg(r.ctx, lastInter.Sequence, jetstream.WithGetMsgSubject(streams.GateLane(streams.Parse, "1b"))); err != nil {
		t.Fatalf("every batch call passed accumulate before the tenant's last interactive one (%v)", err)
	}
	r.durableIdle(streams.Accumulate, streams.AccumulateLane(1), streams.AccumulateBatchLane(1))
	if got := r.pending("parse_1b"); got != batch {
		t.Fatalf("parse_1b holds %d batch calls, want %d: one accumulated twice", got, batch)
	}
}

// The batch durables added to lanes that had none (the upgrade): a batch
// input stored before accumulate_<index>b existed, after the tenant's lane
// owned its subjects, is the main durable's and is handled once; one
// stored after is the batch durable's. Nothing is lost or handled twice.
func TestFair_accumulate_batch_durable_added_handles_each_response_once(t *testing.T) {
	r := startFairRig(t)
	// The layout before the batch durables: quiet's lane reads all its
	// subjects (its start kept in its metadata), and no accumulate_1b.
	if err := r.js.DeleteConsumer(r.ctx, streams.StreamIn, streams.AccumulateBatchLane(1)); err != nil {
		t.Fatal(err)
	}
	c, err := r.js.Consumer(r.ctx, streams.StreamIn, streams.AccumulateLane(1))
	if err != nil {
		t.Fatal(err)
	}
	old := c.CachedInfo().Config
	old.FilterSubjects = []string{"toolgate.in.t.quiet.>"}
	if _, err := r.js.UpdateConsumer(r.ctx, streams.StreamIn, old); err != nil {
		t.Fatal(err)
	}
	const before, after = 4, 3
	for i := range before { // refused by the old grants; an open server stores it
		r.batchInvoice(fmt.Sprintf("before-%d", i), "quiet")
	}
	if err := streams.Ensure(r.ctx, r.js, fairSettings()); err != nil { // the upgrade's apply
		t.Fatal(err)
	}
	nb, err := r.js.Consumer(r.ctx, streams.StreamIn, streams.AccumulateBatchLane(1))
	if err != nil {
		t.Fatal(err)
	}
	if md := nb.CachedInfo().Config.Metadata; md[streams.AccumulateStartKey+"quiet"] == "" || md[streams.AccumulateStartKey+"quiet"] == old.Metadata[streams.AccumulateStartKey+"quiet"] {
		t.Fatalf("the batch durable's start %v, want its own (the lane's is %v)", md, old.Metadata)
	}
	for i := range after {
		r.batchInvoice(fmt.Sprintf("after-%d", i), "quiet")
	}
	r.run(streams.Accumulate)
	r.waitPending("parse_1b", before+after)
	r.durableIdle(streams.Accumulate, streams.AccumulateLane(1), streams.AccumulateBatchLane(1))
	if got := r.pending("parse_1b"); got != before+after {
		t.Fatalf("parse_1b holds %d calls, want %d: a response accumulated twice or not at all", got, before+after)
	}
}

// Hostile input on a tenant's batch subject is recorded and dead-lettered,
// never run as something else: a header asking interactive there is batch
// (at most batch); a stream's event there is refused (whole responses
// only); a stream subject below it is stored by no stream since
// TOOLGATE_IN takes its own subjects only (issue 30), so the publish is
// refused at once; a tenant header naming
// another tenant is refused as on the tenant's other subjects; a body that
// is no provider's is rejected. None of it stops the lane.
func TestFair_accumulate_hostile_input_on_a_batch_subject(t *testing.T) {
	r := startFairRig(t)
	r.run(streams.Accumulate)
	r.batchInvoice("asks-inter", "quiet", streams.HeaderPriority, streams.PriorityInteractive)
	r.batchInvoice("stream-event", "quiet", streams.HeaderSeq, "1")
	r.batchInvoice("stream-end", "quiet", streams.HeaderEnd, "gone")
	below := nats.NewMsg(streams.InTenantBatch("quiet") + ".stream.below")
	below.Data = chat("below", "create_invoice", validInvoice, "tool_calls")
	if _, err := r.js.PublishMsg(r.ctx, below, jetstream.WithRetryAttempts(0)); err == nil {
		t.Fatal("a stream subject below the batch subject was stored")
	}
	r.batchInvoice("names-noisy", "quiet", streams.HeaderTenant, "noisy")
	r.publishOn(streams.InTenantBatch("quiet"), "garbage", []byte(`{"choices":`))
	r.batchInvoice("fine", "quiet")
	r.waitPending("parse_1b", 2) // asks-inter and fine
	r.waitPending("parse_1i", 0)
	for rid, code := range map[string]string{
		"stream-event": ingest.CodeBadSubject, "stream-end": ingest.CodeBadSubject,
		"names-noisy": ingest.CodeTenantNotGranted, "garbage": "undecodable_response",
	} {
		res := r.waitResults(rid, 1)
		if res[0]["status"] != "rejected" || !strings.Contains(fmt.Sprint(res[0]), code) {
			t.Errorf("%s: result %v, want rejected %s", rid, res[0], code)
		}
	}
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if n := len(r.dlq(streams.DLQ(streams.Accumulate, ingest.CodeBadSubject))); n != 2 {
			return fmt.Errorf("%d bad_subject dead letters, want 2", n)
		}
		return nil
	})
	r.durableIdle(streams.Accumulate, streams.AccumulateLane(1), streams.AccumulateBatchLane(1))
}
