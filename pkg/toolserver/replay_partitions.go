package toolserver

import (
	"context"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
)

// replayBuckets finds the bucket of each partition of the executors'
// replay bucket a request names (wire.HeaderReplayPartition): partition 0
// is bound by New, partition k >= 1 (wire.ExecReplayPartitionBucket) the
// first time a request names it, and kept. A bucket that cannot be bound is
// not kept, so one created later (a raised P) is found by the next request.
// With ReplayBucket, fixed holds every partition's records.
type replayBuckets struct {
	fixed jetstream.KeyValue
	js    jetstream.JetStream
	mu    sync.Mutex
	bound map[int]jetstream.KeyValue
}

// bucket is partition p's bucket, 0 <= p < wire.MaxPartitions (the caller
// parsed p with wire.ParseReplayPartition).
func (b *replayBuckets) bucket(ctx context.Context, p int) (jetstream.KeyValue, error) {
	if b.fixed != nil {
		return b.fixed, nil
	}
	b.mu.Lock()
	kv, ok := b.bound[p]
	b.mu.Unlock()
	if ok {
		return kv, nil
	}
	name := wire.ExecReplayPartitionBucket(p)
	kv, err := b.js.KeyValue(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("partition %d's bucket %s: %w (`toolgate streams apply` creates the buckets of the deployment's partitions)", p, name, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if had, ok := b.bound[p]; ok { // bound meanwhile by another request
		return had, nil
	}
	b.bound[p] = kv
	return kv, nil
}
