package streams

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
)

// TOOLGATE_IN's partitions (issue 37, docs/design/layout.md "Partitions"),
// chosen by the server as the claimed subjects' are (claimed_partitions.go):
// account subject mappings (wire.Mappings) append ".<k>" to a stream's
// events, by response id (the claim's hash: a stream's events and its
// claim are in partition k of each), and to a tenant's batch subject, by
// tenant. With P > 1, TOOLGATE_IN keeps its unsuffixed subjects (what
// P = 1 stored, and the whole-response subjects, which are not mapped) and
// takes partition 0's suffixed forms; InputStream(k), TOOLGATE_IN_<k>,
// takes partition k's, with TOOLGATE_IN's config. P = 1: nothing changes.

// InputStream is the stream of TOOLGATE_IN's partition k (wire.InputStream).
func InputStream(k int) string { return wire.InputStream(k) }

// InPartitionSubjects are the subjects partition k of TOOLGATE_IN stores:
// the shared and the tenants' stream events, and the tenants' batch
// responses, each with ".<k>".
func InPartitionSubjects(k int) []string {
	s := "." + strconv.Itoa(k)
	return []string{subjectInStream + "*" + s, wire.InTenantPrefix + "*.stream.*" + s, InTenantBatches() + s}
}

// BatchPartition is where the server's mapping puts tenant token tok's
// batch responses with p partitions: fnv32a of the token mod p
// ({{partition(p,1)}}); 0 for p <= 1.
func BatchPartition(tok string, p int) int {
	if p <= 1 {
		return 0
	}
	return int(fnv32a(tok) % uint32(p))
}

// BatchPlaceFor is where P = p's mapping stores tenant token tok's batch
// responses: the unsuffixed subject for p <= 1.
func BatchPlaceFor(tok string, p int) Place {
	if p <= 1 {
		return Place{Unsuffixed: true}
	}
	return Place{K: BatchPartition(tok, p)}
}

// InPlaceSubject is subject (an unsuffixed stream or batch subject) as
// stored in place, and the stream that stores it there.
func InPlaceSubject(subject string, at Place) (stream, stored string) {
	if at.Unsuffixed {
		return StreamIn, subject
	}
	return InputStream(at.K), subject + "." + strconv.Itoa(at.K)
}

// SplitInPartition parses a stream event's or a tenant's batch subject as
// TOOLGATE_IN's partitions store it: the subject the producer sent (base),
// its partition k and whether it had one. ok is false for any other
// subject, and for a last token that is not a partition (a canonical
// decimal below MaxPartitions) where a partition would be.
func SplitInPartition(subject string) (base string, k int, partitioned, ok bool) {
	suffix := func(head, rest string, tokens int) (string, int, bool, bool) {
		toks := strings.Split(rest, ".")
		switch {
		case len(toks) == tokens:
			return subject, 0, false, true
		case len(toks) != tokens+1:
			return "", 0, false, false
		}
		last := toks[tokens]
		n, err := strconv.Atoi(last)
		if err != nil || n < 0 || n >= MaxPartitions || strconv.Itoa(n) != last {
			return "", 0, false, false
		}
		return head + strings.Join(toks[:tokens], "."), n, true, true
	}
	if rest, on := strings.CutPrefix(subject, subjectInStream); on {
		return suffix(subjectInStream, rest, 1)
	}
	tok, rest, on := wire.SplitInTenant(subject)
	if !on {
		return "", 0, false, false
	}
	head := wire.InTenantPrefix + tok + "."
	switch {
	case strings.HasPrefix(rest, "stream."):
		return suffix(head, rest, 2)
	case rest == wire.InTenantBatchRest || strings.HasPrefix(rest, wire.InTenantBatchRest+"."):
		return suffix(head, rest, 1)
	}
	return "", 0, false, false
}

// inPartitionConfigs are the streams of TOOLGATE_IN's partitions 1 to
// P-1, each like in on its own subjects; and in with partition 0's
// subjects added when P > 1.
func (s Settings) inPartitionConfigs(in jetstream.StreamConfig) (jetstream.StreamConfig, []jetstream.StreamConfig) {
	p := s.Fair.PartitionCount()
	if !s.zeroForms() {
		return in, nil
	}
	zero := in
	zero.Subjects = append(slices.Clone(in.Subjects), InPartitionSubjects(0)...)
	var out []jetstream.StreamConfig
	for k := 1; k < p; k++ {
		c := in
		c.Name, c.Subjects = InputStream(k), InPartitionSubjects(k)
		out = append(out, c)
	}
	return zero, out
}

// input is TOOLGATE_IN and its partition streams.
func input() partitionFamily {
	return partitionFamily{base: StreamIn, subject: "toolgate.in.>", name: InputStream}
}

// InPartitionsOf lists TOOLGATE_IN's partition streams k >= 1 that exist,
// in order of k: what accumulate reads besides TOOLGATE_IN, whatever its P.
func InPartitionsOf(ctx context.Context, js jetstream.JetStream) ([]int, error) {
	return input().partitionsOf(ctx, js)
}

// InStreamNames names TOOLGATE_IN's partition streams k >= 1 that exist
// (InPartitionsOf).
func InStreamNames(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	return input().names(ctx, js)
}

// AllInStreams names TOOLGATE_IN and every partition stream of it that
// exists: what a reader of every stored input reads.
func AllInStreams(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	return input().all(ctx, js)
}

// IsInPartitionStream reports whether name is TOOLGATE_IN_<k>, k >= 1.
func IsInPartitionStream(name string) bool {
	_, ok := input().index(name)
	return ok
}

// inPartitionStreams names TOOLGATE_IN, when infos has it, and its
// partition streams in infos, in order of k: the leader plan places them
// like a stage's partitions, each on another node.
func inPartitionStreams(infos map[string]*jetstream.StreamInfo) []string {
	return input().namesIn(infos)
}

// pruneIn deletes TOOLGATE_IN's partition streams beyond s's P that hold
// nothing; one that still holds input is kept (accumulate reads it until
// its stream events are assembled and its messages age out).
func pruneIn(ctx context.Context, js jetstream.JetStream, s Settings) (deleted, kept []string, err error) {
	ks, err := InPartitionsOf(ctx, js)
	if err != nil {
		return nil, nil, err
	}
	return pruneBeyond(ctx, js, ks, s.Fair.PartitionCount(), InputStream)
}
