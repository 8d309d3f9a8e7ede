package streams

import (
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// With P = 1 the buckets are those of before partitions; with P = 3 the
// executors' bucket gains partitions 1 and 2, each like partition 0 but
// for its name.
func TestBucketConfigs_partition_the_executors_replay_bucket(t *testing.T) {
	s := DefaultSettings()
	s.Replicas, s.Storage = 3, jetstream.MemoryStorage
	one := s.BucketConfigs()
	for _, c := range one {
		if _, ok := replayPartition(c.Bucket); ok && c.Bucket != BucketExecReplay {
			t.Errorf("P = 1 has the bucket %s", c.Bucket)
		}
	}
	s.Fair.Partitions = 3
	three := s.BucketConfigs()
	if len(three) != len(one)+2 || !slices.EqualFunc(one, three[:len(one)], func(a, b jetstream.KeyValueConfig) bool { return a.Bucket == b.Bucket }) {
		t.Fatalf("P = 3: %d buckets, want the %d of P = 1 and 2 more after them", len(three), len(one))
	}
	zero := three[slices.IndexFunc(three, func(c jetstream.KeyValueConfig) bool { return c.Bucket == BucketExecReplay })]
	for i, c := range three[len(one):] {
		want := zero
		want.Bucket = "toolgate_exec_replay_" + string(rune('1'+i))
		want.Description = c.Description
		if c.Bucket != want.Bucket || c.TTL != want.TTL || c.Replicas != 3 || c.Storage != jetstream.MemoryStorage || c.History != want.History {
			t.Errorf("partition %d: %+v, want like %+v", i+1, c, want)
		}
	}
}

// replayPartition is p of an executors' bucket name.
func replayPartition(bucket string) (int, bool) {
	for p := range MaxPartitions {
		if ExecReplayBucket(p) == bucket {
			return p, true
		}
	}
	return 0, false
}
