package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/worker"
)

// Hops is the number of chained JetStream hops the pipeline makes for a
// valid call: the ingest publish and the outputs of accumulate, parse,
// validate, business, policy and execute.
const Hops = 7

// Ceiling pushes n messages of size bytes through Hops chained hops with no
// gate logic, stored as layout says, using the same worker, storage, fetch
// batch and asynchronous publish settings as the pipeline. The best
// layout's figure is the upper bound the pipeline is compared against.
func Ceiling(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, n, size int, storage Storage, layout Layout) (Stats, error) {
	streams := layout.streams()
	for _, s := range streams {
		_ = js.DeleteStream(ctx, s.name)
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
			Name: s.name, Subjects: s.subjects, Storage: storage.Type, Replicas: max(storage.Replicas, 1),
			Retention: jetstream.WorkQueuePolicy, Duplicates: 2 * time.Minute,
		}); err != nil {
			return Stats{}, fmt.Errorf("bench: %w", err)
		}
		defer js.DeleteStream(context.Background(), s.name)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{}, Hops)
	parts := layout.parts()
	for i := range Hops - 1 {
		name, stream := "hop"+strconv.Itoa(i), layout.stream(i)
		var others []string // a partitioned hop's other partitions' streams
		for k := range parts {
			filter, in := hopSubject(i), stream
			if parts > 1 {
				filter, in = partSubject(i, k), layout.partStream(i, k)
				if k > 0 {
					others = append(others, in)
				}
			}
			if _, err := js.CreateOrUpdateConsumer(ctx, in, jetstream.ConsumerConfig{
				Durable: name, FilterSubject: filter, AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 2000, MaxDeliver: 10,
			}); err != nil {
				return Stats{}, fmt.Errorf("bench: %w", err)
			}
		}
		next := hopSubject(i + 1)
		wc := worker.Config{
			Stage: name, Stream: stream, Log: zerolog.Nop(),
			DeadLetter: func(m worker.Msg, code string, err error) []worker.Output { return nil },
		}
		if parts > 1 {
			wc.Parts = func(context.Context) ([]string, error) { return others, nil }
			wc.Resync = time.Hour
		}
		w, err := worker.New(js, wc, func(_ context.Context, m worker.Msg) ([]worker.Output, error) {
			id := m.Header.Get("Bench-Id")
			out := next
			if parts > 1 { // the next hop in the same partition
				out += m.Subject[strings.LastIndexByte(m.Subject, '.'):]
			}
			return []worker.Output{{Subject: out, MsgID: id + ":" + out, Header: m.Header, Data: m.Data}}, nil
		})
		if err != nil {
			return Stats{}, err
		}
		go func() { w.Run(wctx); done <- struct{}{} }()
	}
	// The last hop is stored like a result and read by a subscriber.
	rec := newRecorder(n)
	last := hopSubject(Hops - 1)
	if parts > 1 {
		last += ".*"
	}
	sub, err := nc.Subscribe(last, func(m *nats.Msg) { rec.arrived(m.Header.Get("Bench-Id"), time.Now()) })
	if err != nil {
		return Stats{}, err
	}
	defer sub.Unsubscribe()
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	start := time.Now()
	for i := range n {
		id := "c" + strconv.Itoa(i)
		m := nats.NewMsg(hopSubject(0))
		if parts > 1 {
			m.Subject = partSubject(0, i%parts)
		}
		m.Header.Set("Bench-Id", id)
		m.Data = payload
		rec.sentAt(id, time.Now())
		if err := publishAsync(ctx, js, m, id); err != nil {
			return Stats{}, err
		}
	}
	select {
	case <-rec.done:
	case <-time.After(5 * time.Minute):
		return Stats{}, fmt.Errorf("bench: ceiling: %d of %d arrived", len(rec.lat), n)
	case <-ctx.Done():
		return Stats{}, ctx.Err()
	}
	elapsed := rec.last.Sub(start)
	stop()
	for range Hops - 1 {
		<-done
	}
	// A duplicate can land after the last first arrival: count them once the
	// workers have stopped and the last hop's subscriber has drained.
	closed := sub.StatusChanged(nats.SubscriptionClosed)
	if err := sub.Drain(); err != nil {
		return Stats{}, fmt.Errorf("bench: %w", err)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		return Stats{}, fmt.Errorf("bench: ceiling: the last hop's subscriber did not drain")
	}
	_, dupes, unknown := rec.counts()
	st := Stats{Name: "ceiling, " + layout.String(), Count: n, Elapsed: elapsed, Latencies: rec.lat, Duplicates: dupes + unknown}
	for _, s := range streams { // js.Stream reads the info now, before the deferred deletes
		if str, err := js.Stream(ctx, s.name); err == nil {
			st.Stored += int64(str.CachedInfo().State.LastSeq)
		}
	}
	return st, nil
}

// publishAsync publishes m, waiting while the client holds as many
// unacknowledged publishes as it allows: on a busy machine the server's
// acks fall behind the loop, and a stalled publish is a pause, not a
// failed run.
func publishAsync(ctx context.Context, js jetstream.JetStream, m *nats.Msg, id string) error {
	for {
		_, err := js.PublishMsgAsync(m, jetstream.WithMsgID(id))
		if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
			return err
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-time.After(time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func hopSubject(i int) string { return "toolgate.bench.hop." + strconv.Itoa(i) }
