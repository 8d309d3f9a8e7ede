package streams

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
)

// TOOLGATE_RESPONSES' partitions (issue 37, docs/design/layout.md
// "Partitions"). The producer's claimed subject is the public contract, so
// the partition is chosen by the server: an account subject mapping
// (ResponsesMapping) turns toolgate.in.t.<tenant>.response.<rid> into
// ….<rid>.<k>, k = ResponsePartition(tenant token, rid, P), checked by the
// server against the publisher's permissions on the subject it sent. With
// P > 1, TOOLGATE_RESPONSES keeps its unsuffixed subjects (what P = 1
// stored) and takes partition 0's ….<rid>.0; ResponsesStream(k),
// TOOLGATE_RESPONSES_<k>, takes ….<rid>.<k>, with partition 0's config.
// With P = 1 nothing changes: no mapping, no other stream.

// Metadata keys `streams apply` keeps on TOOLGATE_RESPONSES: the P the
// server's mapping uses, and when it last changed, the P before, for the
// claim period after a change (accumulate reads both places then).
const (
	MetaResponsesPartitions = "toolgate_responses_partitions"
	MetaResponsesPrevious   = "toolgate_responses_previous"
	MetaResponsesChanged    = "toolgate_responses_changed"
)

// ResponsesStream is the stream of claimed partition k (wire.ResponsesStream).
func ResponsesStream(k int) string { return wire.ResponsesStream(k) }

// InClaimedPartition matches every claimed subject of partition k:
// toolgate.in.t.*.response.*.<k>.
func InClaimedPartition(k int) string { return InClaimedAll() + "." + strconv.Itoa(k) }

// ResponsesMapping is the account subject mapping of the claimed subjects
// for P = p: src to dest; both "" for p <= 1 (nothing is mapped).
func ResponsesMapping(p int) (src, dest string) { return wire.ClaimedMapping(p) }

// ResponsePartition is where the server's mapping (ResponsesMapping) puts
// tenant token tok's response rid with p partitions: fnv32a of the two
// tokens' bytes, no separator, mod p (nats-server's getHashPartition);
// 0 for p <= 1.
func ResponsePartition(tok, rid string, p int) int {
	if p <= 1 {
		return 0
	}
	return int(fnv32a(tok+rid) % uint32(p))
}

// SplitClaimedPartition parses a claimed subject as stored: the subject a
// producer sent (base) and its partition k, partitioned false for an
// unsuffixed subject. ok is false when the last token is not a partition
// (canonical decimal below MaxPartitions) on a claimed subject of seven
// tokens, and for a subject that is not claimed at all.
func SplitClaimedPartition(subject string) (base string, k int, partitioned, ok bool) {
	tok, rest, on := wire.SplitInTenant(subject)
	if !on {
		return "", 0, false, false
	}
	rid, claimed := strings.CutPrefix(rest, wire.InTenantClaimedRest)
	if !claimed || rid == "" {
		return "", 0, false, false
	}
	id, part, suffixed := strings.Cut(rid, ".")
	if !suffixed {
		return subject, 0, false, true
	}
	n, err := strconv.Atoi(part)
	if id == "" || err != nil || n < 0 || n >= MaxPartitions || strconv.Itoa(n) != part {
		return "", 0, false, false
	}
	return wire.InTenantPrefix + tok + "." + wire.InTenantClaimedRest + id, n, true, true
}

// responsesPartitionConfigs are the streams of claimed partitions 1 to
// P-1, each like resp (TOOLGATE_RESPONSES) on its own subjects; and resp
// with partition 0's subjects added when P > 1.
func (s Settings) responsesPartitionConfigs(resp jetstream.StreamConfig) (jetstream.StreamConfig, []jetstream.StreamConfig) {
	p := s.Fair.PartitionCount()
	if !s.zeroForms() {
		return resp, nil
	}
	zero := resp
	zero.Subjects = append(slices.Clone(resp.Subjects), InClaimedPartition(0))
	var out []jetstream.StreamConfig
	for k := 1; k < p; k++ {
		c := resp
		c.Name, c.Subjects, c.Metadata = ResponsesStream(k), []string{InClaimedPartition(k)}, nil
		out = append(out, c)
	}
	return zero, out
}

// responses is TOOLGATE_RESPONSES and its partition streams.
func responses() partitionFamily {
	return partitionFamily{base: StreamResponses, subject: wire.InTenantPrefix + ">", name: ResponsesStream}
}

// ResponsesPartitionsOf lists the claimed partition streams k >= 1 that
// exist, in order of k: what accumulate reads besides TOOLGATE_RESPONSES,
// whatever its P.
func ResponsesPartitionsOf(ctx context.Context, js jetstream.JetStream) ([]int, error) {
	return responses().partitionsOf(ctx, js)
}

// ResponsesStreamNames names the claimed partition streams k >= 1 that
// exist (ResponsesPartitionsOf).
func ResponsesStreamNames(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	return responses().names(ctx, js)
}

// AllResponsesStreams names TOOLGATE_RESPONSES and every claimed partition
// stream that exists: what a reader of every claimed response reads.
func AllResponsesStreams(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	return responses().all(ctx, js)
}

// IsResponsesPartitionStream reports whether name is
// TOOLGATE_RESPONSES_<k>, k >= 1.
func IsResponsesPartitionStream(name string) bool {
	_, ok := responses().index(name)
	return ok
}

// responsesPartitionStreams names TOOLGATE_RESPONSES, when infos has it,
// and its partition streams in infos, in order of k: the leader plan
// places them like a stage's partitions, each on another node.
func responsesPartitionStreams(infos map[string]*jetstream.StreamInfo) []string {
	return responses().namesIn(infos)
}
