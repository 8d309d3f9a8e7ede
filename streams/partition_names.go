package streams

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// A partition p >= 1 of a stream is a stream of its own named base_<p>
// beside its partition 0 stream, base: a stage's (PartitionStream), the
// results' (ResultsStream), the claimed responses' (ResponsesStream), the
// input's (InputStream). One parser, two listings and one prune serve them
// all.

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

// partitionFamily is a stream base and its partition streams name(k),
// k >= 1, that hold subject: the claimed responses' and the input's, read
// and listed alike.
type partitionFamily struct {
	base, subject string
	name          func(k int) string
}

// index is k of a stream name name(k), 1 <= k < MaxPartitions.
func (f partitionFamily) index(name string) (int, bool) {
	k, ok := suffixPartition(f.base, name)
	return k, ok && k < MaxPartitions
}

// partitionsOf lists the partition streams k >= 1 that exist, in order of k.
func (f partitionFamily) partitionsOf(ctx context.Context, js jetstream.JetStream) ([]int, error) {
	_, ks, err := listPartitions(ctx, js, f.subject, f.base, f.index)
	if err != nil {
		return nil, fmt.Errorf("streams: partitions of %s: %w", f.base, err)
	}
	return ks, nil
}

// names names the partition streams k >= 1 that exist, in order of k.
func (f partitionFamily) names(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	ks, err := f.partitionsOf(ctx, js)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(ks))
	for _, k := range ks {
		out = append(out, f.name(k))
	}
	return out, nil
}

// all names base and every partition stream that exists.
func (f partitionFamily) all(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	names, err := f.names(ctx, js)
	if err != nil {
		return nil, err
	}
	return append([]string{f.base}, names...), nil
}

// namesIn names base, when infos has it, and its partition streams in
// infos, in order of k (partitionNamesIn).
func (f partitionFamily) namesIn(infos map[string]*jetstream.StreamInfo) []string {
	return partitionNamesIn(infos, f.base, f.index, f.name)
}

// pruneBeyond deletes the partition streams name(k) of ks with k >= p that
// hold nothing, and keeps those that still hold messages (their readers
// read them until they empty).
func pruneBeyond(ctx context.Context, js jetstream.JetStream, ks []int, p int, name func(k int) string) (deleted, kept []string, err error) {
	for _, k := range ks {
		if k < p {
			continue
		}
		n := name(k)
		str, err := js.Stream(ctx, n)
		if err != nil {
			return deleted, kept, fmt.Errorf("streams: stream %s: %w", n, err)
		}
		if str.CachedInfo().State.Msgs > 0 {
			kept = append(kept, n)
			continue
		}
		if err := js.DeleteStream(ctx, n); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return deleted, kept, fmt.Errorf("streams: delete %s: %w", n, err)
		}
		deleted = append(deleted, n)
	}
	return deleted, kept, nil
}
