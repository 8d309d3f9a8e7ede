package wire

import (
	"fmt"
	"strconv"
	"strings"
)

// Partitions of the executors' replay bucket (issue 37). With P > 1
// partitions, the execute gate names the call's partition k in header
// Toolgate-Replay-Partition (decimal, 1 to MaxPartitions-1; absent for
// partition 0) and its signature covers it (ExecRequest.ReplayPartition:
// a line of the signed content), so an executor records the request in
// ExecReplayPartitionBucket(k) and a captured request, replayed, always
// names the bucket where it was recorded first, whatever P is by then.
const HeaderReplayPartition = "Toolgate-Replay-Partition"

// MaxPartitions bounds P: partitions are 0 to MaxPartitions-1.
const MaxPartitions = 64

// ExecReplayPartitionBucket is partition p's replay bucket:
// ExecReplayBucket for p = 0, ExecReplayBucket_<p> for p >= 1.
func ExecReplayPartitionBucket(p int) string {
	if p <= 0 {
		return ExecReplayBucket
	}
	return ExecReplayBucket + "_" + strconv.Itoa(p)
}

// ExecReplayBucketPartition is p of a bucket named
// ExecReplayPartitionBucket(p), 0 <= p < MaxPartitions; false for any
// other name.
func ExecReplayBucketPartition(bucket string) (int, bool) {
	if bucket == ExecReplayBucket {
		return 0, true
	}
	rest, ok := strings.CutPrefix(bucket, ExecReplayBucket+"_")
	if !ok {
		return 0, false
	}
	p, err := ParseReplayPartition([]string{rest})
	return p, err == nil && p > 0
}

// ParseReplayPartition reads the values of header Toolgate-Replay-Partition:
// none is partition 0; one value must be k in canonical decimal, 1 <= k <
// MaxPartitions. Anything else (two values, "0", "01", "-1", "64", "x") is
// an error wrapping ErrExecMalformed: such a request is refused, never run.
func ParseReplayPartition(values []string) (int, error) {
	switch {
	case len(values) == 0:
		return 0, nil
	case len(values) > 1:
		return 0, fmt.Errorf("%w: %d %s headers", ErrExecMalformed, len(values), HeaderReplayPartition)
	}
	p, err := strconv.Atoi(values[0])
	if err != nil || p < 1 || p >= MaxPartitions || strconv.Itoa(p) != values[0] {
		return 0, fmt.Errorf("%w: %s %q: want 1 to %d (absent for partition 0)", ErrExecMalformed, HeaderReplayPartition, clip(values[0]), MaxPartitions-1)
	}
	return p, nil
}

// clip shortens hostile input quoted in an error.
func clip(s string) string {
	if len(s) > 16 {
		return s[:16] + "…"
	}
	return s
}
