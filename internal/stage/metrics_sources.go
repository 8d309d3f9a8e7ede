package stage

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/streams"
)

// maxApprovalsScan bounds the approval records one scrape reads.
const maxApprovalsScan = 10000

// watchCluster reports, on m's scrapes, what the operator alerts on beyond
// this process's own counters: each stage's consumer and the age of its
// oldest unacknowledged message, each executor group's durable (in flight,
// queue, circuit), each listed tenant's lane (backlog, oldest waiting), the
// dead letters stored, and the pending approvals. What this process's NATS user may not read is left out.
func watchCluster(m *metrics.Metrics, stages []string, js jetstream.JetStream, may mayFunc) (stop func()) {
	var first metrics.FirstPending
	all := true
	for _, st := range stages {
		s := streams.StreamOf(st)
		all = all && may(api("STREAM.INFO", s), api("STREAM.MSG.GET", s))
		if streams.Laned(st) { // the oldest of its lanes is read in their stream
			ls := streams.LaneStream(st)
			all = all && may(api("STREAM.INFO", ls), api("STREAM.MSG.GET", ls))
		}
	}
	if all {
		first = metrics.JetStreamFirstPending(js, streams.StreamOf)
	}
	stops := []func(){m.WatchConsumersOldest(stages, metrics.JetStreamInfo(js, streams.StreamOf), first)}
	if may(api("STREAM.INFO", streams.StreamExecute), api("CONSUMER.LIST", streams.StreamExecute)) {
		stops = append(stops, m.WatchExecutorGroups(metrics.JetStreamExecutorGroups(js)))
	}
	if mayReadLanes(may) {
		stops = append(stops, m.WatchTenantLanes(metrics.JetStreamTenantLanes(js, nil)))
	}
	if may(api("STREAM.INFO", streams.StreamDLQ)) {
		stops = append(stops, m.WatchDeadLetters(dlqCounts(js)))
	}
	if kvs := "KV_" + streams.BucketApprovals; may(api("STREAM.INFO", kvs), api("CONSUMER.CREATE", kvs, "x")) {
		stops = append(stops, m.WatchApprovals(pendingApprovals(js)))
	}
	return func() {
		for _, f := range stops {
			f()
		}
	}
}

// mayReadLanes reports whether may lists and reads the durables of the
// fairness lanes (metrics.JetStreamTenantLanes): their streams' info,
// consumers and messages (a denied request would wait for its timeout on
// every scrape).
func mayReadLanes(may mayFunc) bool {
	for _, s := range append([]string{streams.StreamOf(streams.Accumulate), streams.StreamResponses, streams.StreamGates, streams.StreamExecute}, streams.LaneStreams()...) {
		if !may(api("STREAM.INFO", s), api("CONSUMER.LIST", s), api("STREAM.MSG.GET", s)) {
			return false
		}
	}
	return true
}

// dlqCounts counts the dead-letter stream's letters per subject.
func dlqCounts(js jetstream.JetStream) metrics.DeadLetterCounts {
	return func(ctx context.Context) (map[string]uint64, error) {
		st, err := js.Stream(ctx, streams.StreamDLQ)
		if err != nil {
			return nil, err
		}
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(streams.DLQ("*", ">")))
		if err != nil {
			return nil, err
		}
		return info.State.Subjects, nil
	}
}

// pendingApprovals reads the approvals bucket's records (at most
// maxApprovalsScan) and counts the pending ones; a malformed record is not
// counted.
func pendingApprovals(js jetstream.JetStream) metrics.PendingApprovals {
	return func(ctx context.Context) (int, time.Time, error) {
		kv, err := js.KeyValue(ctx, streams.BucketApprovals)
		if err != nil {
			return 0, time.Time{}, err
		}
		w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
		if err != nil {
			return 0, time.Time{}, err
		}
		defer w.Stop()
		n, oldest := 0, time.Time{}
		for seen := 0; seen < maxApprovalsScan; seen++ {
			var e jetstream.KeyValueEntry
			select {
			case e = <-w.Updates():
			case <-ctx.Done():
				return 0, time.Time{}, ctx.Err()
			}
			if e == nil {
				break // every record read
			}
			r, err := approval.Decode(e.Key(), e.Value())
			if err != nil || r.State != approval.Pending {
				continue
			}
			n++
			if oldest.IsZero() || r.RequestedAt.Before(oldest) {
				oldest = r.RequestedAt
			}
		}
		if n == 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return 0, time.Time{}, ctx.Err()
		}
		return n, oldest, nil
	}
}

// api is the JetStream API subject of op on tokens.
func api(op string, tokens ...string) string {
	return strings.Join(append([]string{"$JS.API." + op}, tokens...), ".")
}

// WatchCluster is watchCluster for a process whose js may read everything
// (the admin of `toolgate up`, which runs each stage as its own user): it
// reports every stage's consumer, the dead letters and the approvals on m.
// Called before the stages start on m, it is the watch that reports; theirs,
// narrower, are ignored.
func WatchCluster(m *metrics.Metrics, stages []string, js jetstream.JetStream) (stop func()) {
	return watchCluster(m, stages, js, func(...string) bool { return true })
}
