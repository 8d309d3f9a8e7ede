package bench

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Traffic is what a run asked of NATS: the messages clients sent the
// server and the server sent clients (publishes, publish acks, deliveries,
// acks, pull requests, requests and replies), and the messages JetStream
// stored, summed over every stream and key-value bucket.
type Traffic struct {
	InMsgs  int64 `json:"in_msgs"`
	OutMsgs int64 `json:"out_msgs"`
	Stores  int64 `json:"stores"`
	// ByStream is Stores per stream (a bucket's stream is KV_<bucket>).
	ByStream map[string]int64 `json:"stores_by_stream,omitempty"`
	// Cluster is what each node of a cluster did (ClusterMonitor); nil on
	// one server.
	Cluster *ClusterTraffic `json:"cluster,omitempty"`
}

// ReadTraffic reads the server's message counters and the last sequence of
// every stream (a stream's sequence counts each message it stored, even one
// a work queue has since deleted). With counters that are unavailable
// (ErrNoCounters) the messages stay 0 and the stores are read all the same:
// the report says the messages are unavailable.
func ReadTraffic(ctx context.Context, c Counters, js jetstream.JetStream) (Traffic, error) {
	if c == nil {
		return Traffic{}, errors.New("bench: traffic: no server")
	}
	var t Traffic
	switch v, err := c.Varz(ctx); {
	case errors.Is(err, ErrNoCounters):
	case err != nil:
		return Traffic{}, fmt.Errorf("bench: traffic: %w", err)
	default:
		t.InMsgs, t.OutMsgs = v.InMsgs, v.OutMsgs
		if cm, ok := c.(ClusterMonitor); ok {
			if t.Cluster, err = readClusterTraffic(ctx, cm, v); err != nil {
				return Traffic{}, err
			}
		}
	}
	t.ByStream = map[string]int64{}
	streams := js.ListStreams(ctx)
	for info := range streams.Info() {
		t.Stores += int64(info.State.LastSeq)
		t.ByStream[info.Config.Name] = int64(info.State.LastSeq)
	}
	if err := streams.Err(); err != nil {
		return Traffic{}, fmt.Errorf("bench: traffic: streams: %w", err)
	}
	return t, nil
}

// Since is the traffic between t0 and t.
func (t Traffic) Since(t0 Traffic) Traffic {
	d := Traffic{InMsgs: t.InMsgs - t0.InMsgs, OutMsgs: t.OutMsgs - t0.OutMsgs, Stores: t.Stores - t0.Stores, Cluster: t.Cluster.since(t0.Cluster)}
	for name, n := range t.ByStream {
		if n -= t0.ByStream[name]; n != 0 {
			if d.ByStream == nil {
				d.ByStream = map[string]int64{}
			}
			d.ByStream[name] = n
		}
	}
	return d
}

// PerCall is the traffic of one of n calls (messages).
type PerCall struct {
	Messages float64 `json:"nats_messages"`
	Stores   float64 `json:"stores"`
	// StoresBy is Stores per stream, for the streams that stored any.
	StoresBy map[string]float64 `json:"stores_by_stream,omitempty"`
	// Cluster is the per-call figures of each node of a cluster; nil on
	// one server.
	Cluster *ClusterPerCall `json:"cluster,omitempty"`
}

// Per divides t over n calls.
func (t Traffic) Per(n int) PerCall {
	if n <= 0 {
		return PerCall{}
	}
	p := PerCall{Messages: float64(t.InMsgs+t.OutMsgs) / float64(n), Stores: float64(t.Stores) / float64(n)}
	for name, s := range t.ByStream {
		if p.StoresBy == nil {
			p.StoresBy = map[string]float64{}
		}
		p.StoresBy[name] = float64(s) / float64(n)
	}
	p.Cluster = t.Cluster.per(t.ByStream, n)
	return p
}

// ExecutorStores is the part of Stores that the executors write, not
// toolgate: their durable records of the requests they took
// (wire.ExecReplayBucket and, with P > 1, its partitions' buckets, written
// by pkg/toolserver), the executor's cost as its signature check is.
func (p PerCall) ExecutorStores() float64 {
	var sum float64
	for name, n := range p.StoresBy {
		if IsExecutorStream(name) {
			sum += n
		}
	}
	return sum
}

// ExecutorStream is the stream of the executors' records of the requests
// they took (wire.ExecReplayBucket's); ExecutorStream_<k> is partition k's.
const ExecutorStream = "KV_" + wire.ExecReplayBucket

// IsExecutorStream reports whether name is the stream of a partition of
// the executors' records.
func IsExecutorStream(name string) bool {
	bucket, ok := strings.CutPrefix(name, "KV_")
	if !ok {
		return false
	}
	_, ok = wire.ExecReplayBucketPartition(bucket)
	return ok
}

// FormatStoresBy writes stores per call by stream, most first, as
// "NAME 1.00, …".
func FormatStoresBy(by map[string]float64) string {
	names := make([]string, 0, len(by))
	for name := range by {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		if by[names[i]] != by[names[j]] {
			return by[names[i]] > by[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %.2f", name, by[name])
	}
	return strings.Join(parts, ", ")
}
