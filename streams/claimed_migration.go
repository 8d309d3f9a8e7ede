package streams

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Changing P moves a response id's claimed subject to another stream
// (ResponsePartition), where a retry after the change would not be
// refused. So `streams apply` records on TOOLGATE_RESPONSES the P the
// claimed subjects are mapped with (MetaResponsesPartitions), and, when
// it changes, the P before and when (MetaResponsesPrevious,
// MetaResponsesChanged); for the claim period after that, accumulate also
// reads where the P before put an id (ResponsesLayout.Places) and the copy
// stored first keeps it (docs/design/layout.md, "Partitions").

// ResponsesLayout is what TOOLGATE_RESPONSES' metadata says of its
// partitions.
type ResponsesLayout struct {
	Partitions int       // P the mapping uses; 1 when unrecorded
	Previous   int       // P before the last change; 0: never changed
	Changed    time.Time // when it changed; zero: never
}

// ReadResponsesLayout reads md, TOOLGATE_RESPONSES' metadata.
func ReadResponsesLayout(md map[string]string) ResponsesLayout {
	l := ResponsesLayout{Partitions: 1}
	if p, err := strconv.Atoi(md[MetaResponsesPartitions]); err == nil && p >= 1 {
		l.Partitions = p
	}
	if p, err := strconv.Atoi(md[MetaResponsesPrevious]); err == nil && p >= 1 {
		l.Previous = p
	}
	if t, err := time.Parse(time.RFC3339Nano, md[MetaResponsesChanged]); err == nil {
		l.Changed = t
	}
	return l
}

// Migrating reports whether an id claimed under the P before may still be
// held where that P put it at now: P changed less than ttl ago.
func (l ResponsesLayout) Migrating(now time.Time, ttl time.Duration) bool {
	return l.Previous >= 1 && l.Previous != l.Partitions && !l.Changed.IsZero() && now.Sub(l.Changed) < ttl
}

// Place is one place a claimed subject may be stored: partition K, or the
// unsuffixed subject of P = 1 (Unsuffixed, K = 0).
type Place struct {
	K          int
	Unsuffixed bool
}

// PlaceFor is where P = p's mapping stores tenant token tok's response rid.
func PlaceFor(tok, rid string, p int) Place {
	if p <= 1 {
		return Place{Unsuffixed: true}
	}
	return Place{K: ResponsePartition(tok, rid, p)}
}

// responsesMetadata is TOOLGATE_RESPONSES' metadata for s at now: its P,
// and the P before with the time it changed, kept from the stream's until
// P changes again. A stream that exists without the keys was made with
// P = 1; a new stream has no P before.
func responsesMetadata(ctx context.Context, js jetstream.JetStream, s Settings, now time.Time) (map[string]string, error) {
	p := s.Fair.PartitionCount()
	md := map[string]string{MetaResponsesPartitions: strconv.Itoa(p)}
	st, err := js.Stream(ctx, StreamResponses)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return md, nil
	}
	if err != nil {
		return nil, fmt.Errorf("streams: stream %s: %w", StreamResponses, err)
	}
	old := st.CachedInfo().Config.Metadata
	was := ReadResponsesLayout(old)
	if was.Partitions != p {
		md[MetaResponsesPrevious] = strconv.Itoa(was.Partitions)
		md[MetaResponsesChanged] = now.UTC().Format(time.RFC3339Nano)
		return md, nil
	}
	for _, k := range []string{MetaResponsesPrevious, MetaResponsesChanged} {
		if v, ok := old[k]; ok {
			md[k] = v
		}
	}
	return md, nil
}
