package ingest

import (
	"context"
	"fmt"
	"strconv"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// TOOLGATE_IN's partitions (issue 37, streams/in_partitions.go). With
// P > 1 the server stores a stream's events with ".<k>" appended, k by
// its response id as the claim's (streams.ResponsePartition), and a
// tenant's batch responses by tenant (streams.BatchPartition), in
// TOOLGATE_IN_<k>. Accumulate reads a stream's events where TOOLGATE_
// RESPONSES' recorded P puts them and, in the claim period after P
// changed, where the P before did too (a stream open across the change has
// events in both), merged by Toolgate-Seq; and it refuses an input stored
// where neither puts it: nats-server checks a publish's permission on the
// mapped subject, so a producer is granted the suffixed subjects and could
// pick a partition itself.

// streamPlaces are where ref's events may be stored: where the P before
// put them first, in the claim period after a change, then where the P
// now puts them.
func (a *Accumulate) streamPlaces(ctx context.Context, ref streamRef) ([]streams.Place, error) {
	if a.JS == nil {
		return []streams.Place{{Unsuffixed: true}}, nil
	}
	l, err := a.responsesLayout(ctx, false)
	if err != nil {
		return nil, err
	}
	now := streams.PlaceFor(ref.tok, ref.rid, l.Partitions)
	if !l.Migrating(a.Now(), a.claimTTL()) {
		return []streams.Place{now}, nil
	}
	if was := streams.PlaceFor(ref.tok, ref.rid, l.Previous); was != now {
		return []streams.Place{was, now}, nil
	}
	return []streams.Place{now}, nil
}

// inMisplaced says why an input of TOOLGATE_IN stored on subject in place
// at is where no P of the layout puts it (placeFor: where P = p puts it),
// "" when it is where the P now, or in the claim period after a change the
// P before, puts it. The layout is read again before refusing: P may have
// changed since it was cached.
func (a *Accumulate) inMisplaced(ctx context.Context, subject string, at streams.Place, placeFor func(p int) streams.Place) (string, error) {
	if a.JS == nil {
		return "", nil
	}
	fits := func(l streams.ResponsesLayout) bool {
		return at == placeFor(l.Partitions) || (l.Migrating(a.Now(), a.claimTTL()) && at == placeFor(l.Previous))
	}
	l, err := a.responsesLayout(ctx, false)
	if err != nil || fits(l) {
		return "", err
	}
	if l, err = a.responsesLayout(ctx, true); err != nil || fits(l) {
		return "", err
	}
	if at.Unsuffixed {
		return fmt.Sprintf("subject %s is stored unmapped while the ingest has %d partitions: the NATS server must map it (docs/design/layout.md, \"Partitions\"); nothing of it runs", shortValue(subject, 160), l.Partitions), nil
	}
	return fmt.Sprintf("subject %s names partition %d, where %d partitions never put it: a stream's events and a batch response are published without a partition, the server picks it; nothing of it runs",
		shortValue(subject, 160), at.K, l.Partitions), nil
}

// misplacedInput refuses input m (of response rid) stored where the
// mapping would not put it: a dead letter, and a result under no tenant
// whose message id is the input's own (its subject, which names its
// partition, and its sequence there), so it
// never stands in for the result of the response stored where the
// mapping put it.
func (a *Accumulate) misplacedInput(m worker.Msg, rid, why string) ([]worker.Output, error) {
	return a.conflict(m, rid, m.Header.Get(streams.HeaderProvider), "", call.Rejected, CodeBadSubject, m.Subject+"@"+strconv.FormatUint(m.StreamSeq, 10), why)
}

// inPlaceOf is the place of a stored subject's partition.
func inPlaceOf(k int, partitioned bool) streams.Place {
	return streams.Place{K: k, Unsuffixed: !partitioned}
}
