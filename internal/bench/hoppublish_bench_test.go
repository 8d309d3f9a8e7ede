package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
)

// hopChain is the number of chained hops BenchmarkHopPublish runs: hop i
// reads stream HP<i> and writes HP<i+1>.
const hopChain = 3

// BenchmarkHopPublish is issue 30's check of fast batch publishing (nats-
// server 2.14, stream option allow_batched) for the gate's hops
// (docs/performance.md, "Fast batch publishing for the hops, measured").
// hopChain hops, one file-storage work-queue stream each, each hop pulling
// its input (as the worker: pull batch 100, MaxAckPending 2000),
// publishing the output to the next stream with a Nats-Msg-Id and acking
// the input only once the output is known stored:
//
//   - puback: today's worker, an async publish per output and the input
//     acked on its PubAck;
//   - fast16, fast64: one long-lived fast batch publisher per hop, flow 16
//     or 64: a batch runs while inputs keep coming, its last message
//     commits it when no input is waiting, and an input is acked when a
//     flow ack or the batch's PubAck covers its output;
//   - fast64x2: two such publishers per hop (two workers of a stage): two
//     batches open on one stream at once, for which the server lowers the
//     flow (jetstream_batching.go, fastBatchInit: 1 for a batch that starts
//     while another is open, then doubling up to 500 / open batches).
//
// The b.N inputs are stored before the clock starts; then the hops drain
// them. Per hop: cpu-µs/hop is this process's CPU (client and embedded
// server), msgs/hop the server's in_msgs+out_msgs (Varz: pull requests
// included, which vary from run to run alike in every mode), hops/s the
// throughput. Then 200 inputs one at a time, each once the last hop acked
// the one before (lowload-*: lowload-µs/hop is the median end to end time,
// the ingest publish's round trip included, over hopChain; the ingest
// publish and its PubAck are not in lowload-msgs/hop); then 2,000 inputs
// paced at 2,000 a second (paced-*: the chain idles between inputs).
// Of the fast batch publishers: batch-len, the mean batch length;
// flowacks/batch, the flow acks per batch (the first message's {"seq":0}
// included); replies/out, the server's answers per output, exact where
// msgs/hop carries the pull requests' noise (a PubAck per output: 1).
//
//	go test -run '^$' -bench BenchmarkHopPublish -benchtime 50000x -count 3 ./internal/bench/
func BenchmarkHopPublish(b *testing.B) {
	for _, mode := range []struct {
		name       string
		flow, pubs int // flow 0: PubAck per output
	}{{"puback", 0, 1}, {"fast16", 16, 1}, {"fast64", 64, 1}, {"fast64x2", 64, 2}} {
		b.Run(mode.name, func(b *testing.B) { benchHops(b, mode.flow, mode.pubs) })
	}
}

func benchHops(b *testing.B, flow, pubs int) {
	s := testenv.RunJetStream(b)
	nc, js := testenv.Connect(b, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range hopChain + 1 {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
			Name: "HP" + strconv.Itoa(i), Subjects: []string{hpSubject(i)}, Storage: jetstream.FileStorage,
			Retention: jetstream.WorkQueuePolicy, Duplicates: 2 * time.Minute, AllowBatchPublish: flow > 0,
		}); err != nil {
			b.Fatal(err)
		}
	}
	n := max(b.N, 100)
	data := bytes.Repeat([]byte("h"), 1000)
	for i := range n { // the backlog the hops drain
		if err := publishAsync(ctx, js, &nats.Msg{Subject: hpSubject(0), Data: data}, "in"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		b.Fatal("backlog not stored")
	}
	hops := make([]*hop, hopChain)
	for i := range hops {
		h, err := startHop(ctx, nc, js, i, flow, pubs)
		if err != nil {
			b.Fatal(err)
		}
		hops[i] = h
	}
	last := hops[hopChain-1]
	counters := Embedded{S: s}
	v0, err := counters.Varz(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0, t0 := Self().CPU, time.Now()
	for _, h := range hops {
		h.run()
	}
	if err := last.waitAcked(int64(n), 5*time.Minute); err != nil {
		b.Fatal(err)
	}
	cpu, wall := Self().CPU-cpu0, time.Since(t0)
	b.StopTimer()
	v1, err := counters.Varz(ctx)
	if err != nil {
		b.Fatal(err)
	}
	total := float64(n * hopChain)
	b.ReportMetric(float64(cpu.Microseconds())/total, "cpu-µs/hop")
	b.ReportMetric(float64(v1.InMsgs+v1.OutMsgs-v0.InMsgs-v0.OutMsgs)/total, "msgs/hop")
	b.ReportMetric(total/wall.Seconds(), "hops/s")
	if st := fastStats(b, hops); st.Batches > 0 {
		b.ReportMetric(float64(st.Sent)/float64(st.Batches), "batch-len")
		b.ReportMetric(float64(st.FlowAcks)/float64(st.Batches), "flowacks/batch")
		b.ReportMetric(float64(st.Replies)/float64(st.Sent), "replies/out")
	}
	oneAtATime(ctx, b, js, counters, hops, data)
	paced(ctx, b, js, counters, hops, data)
	for _, h := range hops {
		if err := h.failure(); err != nil {
			b.Fatal(err)
		}
	}
}

// oneAtATime sends 200 inputs, each once the last hop acked the one
// before.
func oneAtATime(ctx context.Context, b *testing.B, js jetstream.JetStream, counters Counters, hops []*hop, data []byte) {
	const one = 200
	last, st0 := hops[len(hops)-1], fastStats(b, hops)
	lat := make([]time.Duration, 0, one)
	v0, err := counters.Varz(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for i := range one {
		before := last.acked.Load()
		t := time.Now()
		if _, err := js.Publish(ctx, hpSubject(0), data, jetstream.WithMsgID("one"+strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
		if err := last.waitAcked(before+1, 10*time.Second); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
	}
	v1, err := counters.Varz(ctx)
	if err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[one/2].Microseconds())/hopChain, "lowload-µs/hop")
	b.ReportMetric(float64(v1.InMsgs+v1.OutMsgs-v0.InMsgs-v0.OutMsgs-2*one)/(one*hopChain), "lowload-msgs/hop")
	if st := fastStats(b, hops); st.Sent > st0.Sent {
		b.ReportMetric(float64(st.Replies-st0.Replies)/float64(st.Sent-st0.Sent), "lowload-replies/out")
	}
}

// paced sends 2,000 inputs at 2,000 a second, about the pipeline's full
// rate (docs/performance.md), far below this chain's: each hop idles
// between inputs, as the gate's stages at half its rate.
func paced(ctx context.Context, b *testing.B, js jetstream.JetStream, counters Counters, hops []*hop, data []byte) {
	const n, every = 2000, 500 * time.Microsecond
	last := hops[len(hops)-1]
	st0 := fastStats(b, hops)
	before := last.acked.Load()
	v0, err := counters.Varz(ctx)
	if err != nil {
		b.Fatal(err)
	}
	cpu0, t0 := Self().CPU, time.Now()
	for i := range n {
		if d := time.Until(t0.Add(time.Duration(i) * every)); d > 0 {
			time.Sleep(d)
		}
		if err := publishAsync(ctx, js, &nats.Msg{Subject: hpSubject(0), Data: data}, "paced"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := last.waitAcked(before+n, time.Minute); err != nil {
		b.Fatal(err)
	}
	cpu := Self().CPU - cpu0
	v1, err := counters.Varz(ctx)
	if err != nil {
		b.Fatal(err)
	}
	total := float64(n * hopChain)
	b.ReportMetric(float64(cpu.Microseconds())/total, "paced-cpu-µs/hop")
	b.ReportMetric(float64(v1.InMsgs+v1.OutMsgs-v0.InMsgs-v0.OutMsgs-2*n)/total, "paced-msgs/hop")
	if st := fastStats(b, hops); st.Batches > st0.Batches {
		b.ReportMetric(float64(st.Sent-st0.Sent)/float64(st.Batches-st0.Batches), "paced-batch-len")
		b.ReportMetric(float64(st.Replies-st0.Replies)/float64(st.Sent-st0.Sent), "paced-replies/out")
	}
}

// fastStats sums the hops' fast batch publishers' counts.
func fastStats(b *testing.B, hops []*hop) fbStats {
	var sum fbStats
	for _, h := range hops {
		for _, f := range h.fast {
			st, err := f.stats()
			if err != nil {
				b.Fatal(err)
			}
			sum = sum.plus(st)
		}
	}
	return sum
}

func hpSubject(i int) string { return "hp." + strconv.Itoa(i) }

// hop is one link of the chain: it reads HP<i> and writes HP<i+1>.
type hop struct {
	i     int
	js    jetstream.JetStream
	iter  jetstream.MessagesContext
	fast  []*fastHop // none: PubAck per output
	in    chan jetstream.Msg
	acked atomic.Int64
	tick  chan struct{} // a non-blocking note per ack

	mu  sync.Mutex
	err error
}

func startHop(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, i, flow, pubs int) (*hop, error) {
	cons, err := js.CreateOrUpdateConsumer(ctx, "HP"+strconv.Itoa(i), jetstream.ConsumerConfig{
		Durable: "hop" + strconv.Itoa(i), AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 2000, MaxDeliver: 10,
	})
	if err != nil {
		return nil, err
	}
	h := &hop{i: i, js: js, in: make(chan jetstream.Msg, 100), tick: make(chan struct{}, 1)}
	for range pubs * min(flow, 1) {
		f, err := newFastHop(nc, flow, h.ack)
		if err != nil {
			return nil, err
		}
		h.fast = append(h.fast, f)
	}
	// As the worker's pull options (internal/worker/pull.go).
	h.iter, err = cons.Messages(jetstream.PullMaxMessages(100), jetstream.PullExpiry(10*time.Second), jetstream.PullHeartbeat(2*time.Second))
	if err != nil {
		return nil, err
	}
	go func() { <-ctx.Done(); h.iter.Stop() }()
	return h, nil
}

func (h *hop) run() {
	go h.pump()
	for _, f := range h.fast {
		go h.publishFast(f)
	}
	if len(h.fast) > 0 {
		return
	}
	acks := make(chan pubAcked, 400) // the worker's window: 4 x its pull batch
	go h.publishAsync(acks)
	go func() {
		for p := range acks {
			select {
			case <-p.f.Ok():
				h.ack(p.in)
			case err := <-p.f.Err():
				h.fail(err)
			}
		}
	}()
}

type pubAcked struct {
	in jetstream.Msg
	f  jetstream.PubAckFuture
}

// pump hands the iterator's messages to the publishing loop, waking every
// 20 ms as the worker's next does (a pull request a racing one skipped).
func (h *hop) pump() {
	defer close(h.in)
	for {
		m, err := h.iter.Next(jetstream.NextMaxWait(20 * time.Millisecond))
		if errors.Is(err, nats.ErrTimeout) {
			continue
		}
		if err != nil {
			return
		}
		h.in <- m
	}
}

func (h *hop) output(in jetstream.Msg) (*nats.Msg, string) {
	md, _ := in.Metadata()
	id := "h" + strconv.Itoa(h.i) + ":" + strconv.FormatUint(md.Sequence.Stream, 10)
	return &nats.Msg{Subject: hpSubject(h.i + 1), Data: in.Data(), Header: nats.Header{}}, id
}

func (h *hop) publishAsync(acks chan<- pubAcked) {
	defer close(acks)
	for in := range h.in {
		out, id := h.output(in)
		for {
			f, err := h.js.PublishMsgAsync(out, jetstream.WithMsgID(id))
			if errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				<-h.js.PublishAsyncComplete()
				continue
			}
			if err != nil {
				h.fail(err)
				return
			}
			acks <- pubAcked{in: in, f: f}
			break
		}
	}
}

// publishFast sends each output into the hop's batch, committing with it
// when no further input is waiting.
func (h *hop) publishFast(f *fastHop) {
	cur, ok := <-h.in
	for ok {
		out, id := h.output(cur)
		out.Header.Set(jetstream.MsgIDHeader, id)
		var next jetstream.Msg
		select {
		case next, ok = <-h.in:
		default:
		}
		if err := f.send(cur, out, next == nil); err != nil {
			h.fail(err)
			return
		}
		if next == nil && ok {
			cur, ok = <-h.in
		} else {
			cur = next
		}
	}
}

func (h *hop) ack(in jetstream.Msg) {
	if err := in.Ack(); err != nil {
		h.fail(err)
	}
	h.acked.Add(1)
	select {
	case h.tick <- struct{}{}:
	default:
	}
}

func (h *hop) waitAcked(n int64, within time.Duration) error {
	deadline := time.After(within)
	for h.acked.Load() < n {
		select {
		case <-h.tick:
		case <-deadline:
			return fmt.Errorf("hop %d: %d of %d inputs acked (%v)", h.i, h.acked.Load(), n, h.failure())
		}
	}
	return nil
}

func (h *hop) fail(err error) {
	h.mu.Lock()
	if h.err == nil {
		h.err = err
	}
	h.mu.Unlock()
}

func (h *hop) failure() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range h.fast {
		if _, err := f.stats(); h.err == nil && err != nil {
			return err
		}
	}
	return h.err
}
