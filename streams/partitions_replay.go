package streams

import (
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
)

// The executors' replay bucket is partitioned too (issue 37): with P > 1,
// partition k >= 1 of it is the bucket ExecReplayBucket(k),
// toolgate_exec_replay_<k>, like partition 0 (BucketExecReplay) in all but
// its name. The execute gate names a call's partition in its signed request
// (wire.HeaderReplayPartition) and pkg/toolserver records the request
// there, so the partition is chosen once, by the signer: a request replayed
// after P changed still names the bucket of its first run. Lowering P
// deletes none of them: their records answer status queries and refuse
// replays until their TTL; delete a bucket beyond P by hand once that has
// passed.

// ExecReplayBucket is partition p's bucket of the executors' records:
// BucketExecReplay for p = 0.
func ExecReplayBucket(p int) string { return wire.ExecReplayPartitionBucket(p) }

// execReplayBucket is partition p's bucket of the executors' records.
func (s Settings) execReplayBucket(p int) jetstream.KeyValueConfig {
	c := jetstream.KeyValueConfig{Bucket: ExecReplayBucket(p), Description: "executor requests taken, by tool and idempotency key", History: 1, TTL: s.execReplayTTL(), Storage: s.Storage, Replicas: s.Replicas}
	if p > 0 {
		c.Description += ", partition " + strconv.Itoa(p)
	}
	return c
}

// execReplayPartitions are the executors' buckets of partitions 1 to P-1;
// none with P = 1.
func (s Settings) execReplayPartitions() []jetstream.KeyValueConfig {
	var out []jetstream.KeyValueConfig
	for p := 1; p < s.Fair.PartitionCount(); p++ {
		out = append(out, s.execReplayBucket(p))
	}
	return out
}

// ExecReplayKeysIn is the subject of every record of tool in partition p's
// bucket of the executors' records: ExecReplayKeys for p = 0.
func ExecReplayKeysIn(p int, tool string) string {
	return "$KV." + ExecReplayBucket(p) + "." + tool + ".*"
}

// replayPartitionStreams names the streams of the executors' replay
// buckets among infos, in order of partition (partition 0's first).
func replayPartitionStreams(infos map[string]*jetstream.StreamInfo) []string {
	var ps []int
	for name := range infos {
		bucket, ok := strings.CutPrefix(name, "KV_")
		if !ok {
			continue
		}
		if p, ok := wire.ExecReplayBucketPartition(bucket); ok {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, "KV_"+ExecReplayBucket(p))
	}
	return out
}
