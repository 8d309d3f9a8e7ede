package streams

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// A partition p >= 1 of a stream is a stream of its own named base_<p>
// beside its partition 0 stream, base: a stage's (PartitionStream), the
// results' (ResultsStream), the claimed responses' (ResponsesStream). One
// parser and two listings serve them all.

// suffixPartition is p of a stream name base_<p>, p >= 1 in canonical
// decimal; false for any other name.
func suffixPartition(base, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, base+"_")
	if !ok {
		return 0, false
	}
	p, err := strconv.Atoi(rest)
	if err != nil || p < 1 || strconv.Itoa(p) != rest {
		return 0, false
	}
	return p, true
}

// listPartitions lists the streams that hold subject: whether base is
// among them, and the partitions p >= 1 that index finds among their
// names, in order of p.
func listPartitions(ctx context.Context, js jetstream.JetStream, subject, base string, index func(name string) (int, bool)) (hasBase bool, ps []int, err error) {
	l := js.StreamNames(ctx, jetstream.WithStreamListSubject(subject))
	for name := range l.Name() {
		if name == base {
			hasBase = true
		} else if p, ok := index(name); ok {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return hasBase, ps, l.Err()
}

// partitionNamesIn names base, when infos has it, then the streams in
// infos whose partition index finds, in order of partition (name(p)
// names partition p): none without base.
func partitionNamesIn(infos map[string]*jetstream.StreamInfo, base string, index func(name string) (int, bool), name func(p int) string) []string {
	if _, ok := infos[base]; !ok {
		return nil
	}
	var ps []int
	for n := range infos {
		if p, ok := index(n); ok {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	out := []string{base}
	for _, p := range ps {
		out = append(out, name(p))
	}
	return out
}
