package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// The claimed subjects' partitions (issue 37, streams/claimed_partitions.go).
// With P > 1 the server stores a claimed subject with ".<k>" appended, in
// TOOLGATE_RESPONSES_<k>: accumulate reads the base subject (the one the
// producer sent, which its claim messages are published on and tagged
// with), finds what holds an id where its P puts it first and anywhere
// else after (wire.ClaimedPlaces), and in the claim period after P
// changed also reads where the P before put the id: the copy stored
// first keeps it (migrate).

// layoutCheck is how long the cached ResponsesLayout is kept.
const layoutCheck = time.Minute

// claimedBase is the claimed subject a stored one was published on: its
// partition suffix cut; subject itself for any other.
func claimedBase(subject string) string {
	if base, _, _, ok := streams.SplitClaimedPartition(subject); ok {
		return base
	}
	return subject
}

// placeOf is where a claimed subject as stored is: its partition, or the
// unsuffixed subject of P = 1.
func placeOf(subject string) streams.Place {
	_, k, parted, _ := streams.SplitClaimedPartition(subject)
	return streams.Place{K: k, Unsuffixed: !parted}
}

// getOn is the direct-get subject of claimed subject (its base) in place.
func getOn(subject string, p streams.Place) string {
	if p.Unsuffixed {
		return wire.ClaimedLast(subject)
	}
	return wire.ClaimedLastIn(subject, p.K)
}

// partitions is accumulate's P (its --partitions), at least 1.
func (a *Accumulate) partitions() int { return max(a.Partitions, 1) }

// lastClaimed is the message that holds claimed subject (a base subject):
// where accumulate's P puts it first, then every place a P may have put it
// (a lowered or raised P); nil when none does.
func (a *Accumulate) lastClaimed(ctx context.Context, subject string) (*nats.Msg, error) {
	tok, rest, _ := wire.SplitInTenant(subject)
	rid := strings.TrimPrefix(rest, wire.InTenantClaimedRest)
	own := getOn(subject, streams.PlaceFor(tok, rid, a.partitions()))
	if r, err := a.directGet(ctx, own); r != nil || err != nil {
		return r, err
	}
	for _, at := range wire.ClaimedPlaces(subject) {
		if at == own {
			continue
		}
		if r, err := a.directGet(ctx, at); r != nil || err != nil {
			return r, err
		}
	}
	return nil, nil
}

// directGet asks one direct-get subject: the message, nil when none is
// stored there or the stream does not exist (no responders).
func (a *Accumulate) directGet(ctx context.Context, at string) (*nats.Msg, error) {
	r, err := a.JS.Conn().RequestWithContext(ctx, at, nil)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("accumulate: read the claim (%s): %w", at, err)
	}
	switch r.Header.Get("Status") {
	case "":
		return r, nil
	case "404", "503":
		return nil, nil
	}
	return nil, fmt.Errorf("accumulate: read the claim (%s): status %s %s", at, r.Header.Get("Status"), r.Header.Get("Description"))
}

// layoutCache caches TOOLGATE_RESPONSES' partitions as its metadata says.
type layoutCache struct {
	mu      sync.Mutex
	checked time.Time
	layout  streams.ResponsesLayout
}

// responsesLayout is TOOLGATE_RESPONSES' ResponsesLayout, asked once a
// minute (a stream info), or now when fresh.
func (a *Accumulate) responsesLayout(ctx context.Context, fresh bool) (streams.ResponsesLayout, error) {
	a.lay.mu.Lock()
	defer a.lay.mu.Unlock()
	now := a.Now()
	if !fresh && !a.lay.checked.IsZero() && now.Sub(a.lay.checked) < layoutCheck && !now.Before(a.lay.checked) {
		return a.lay.layout, nil
	}
	st, err := a.JS.Stream(ctx, streams.StreamResponses)
	if err != nil {
		return streams.ResponsesLayout{}, fmt.Errorf("accumulate: stream %s: %w", streams.StreamResponses, err)
	}
	a.lay.layout, a.lay.checked = streams.ReadResponsesLayout(st.CachedInfo().Config.Metadata), now
	return a.lay.layout, nil
}

// before reports whether a message stored at ta in place pa was stored
// before one stored at tb in pb: the earlier time, then the lower
// partition (the unsuffixed subject lowest).
func before(ta time.Time, pa streams.Place, tb time.Time, pb streams.Place) bool {
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	rank := func(p streams.Place) int {
		if p.Unsuffixed {
			return -1
		}
		return p.K
	}
	return rank(pa) < rank(pb)
}

// migrate decides, in the claim period after P changed, whether rid's
// claim held by input m (on its claimed subject, or by the claim message
// accumulate published for it where its P puts it) is the first: it reads
// the places the P before and the P now put rid, and when another holds a
// copy stored before m's, that copy keeps the id. It returns nil when m's
// claim is the first (or nothing changed), else the earlier claim (the
// caller tells a duplicate from a conflict).
func (a *Accumulate) migrate(ctx context.Context, m worker.Msg, tenant, rid string) (*claim, error) {
	subject := streams.InTenantClaimed(tenant, rid)
	tok, _, _ := wire.SplitInTenant(subject)
	l, err := a.responsesLayout(ctx, false)
	if err != nil {
		return nil, err
	}
	if onClaimed(m.Subject) && placeOf(m.Subject) != streams.PlaceFor(tok, rid, l.Partitions) {
		// Stored where the P cached does not put it: P changed since.
		if l, err = a.responsesLayout(ctx, true); err != nil {
			return nil, err
		}
	}
	if !l.Migrating(a.Now(), a.claimTTL()) {
		return nil, nil
	}
	mine := streams.PlaceFor(tok, rid, l.Partitions)
	if onClaimed(m.Subject) {
		mine = placeOf(m.Subject)
	}
	own, err := a.directGet(ctx, getOn(subject, mine))
	if err != nil || own == nil {
		return nil, err
	}
	ownAt, _ := time.Parse(time.RFC3339Nano, own.Header.Get("Nats-Time-Stamp"))
	for _, p := range []streams.Place{streams.PlaceFor(tok, rid, l.Previous), streams.PlaceFor(tok, rid, l.Partitions)} {
		if p == mine {
			continue
		}
		r, err := a.directGet(ctx, getOn(subject, p))
		if err != nil {
			return nil, err
		}
		if r == nil {
			continue
		}
		at, _ := time.Parse(time.RFC3339Nano, r.Header.Get("Nats-Time-Stamp"))
		if !before(at, p, ownAt, mine) {
			continue
		}
		return a.claimOf(subject, r.Header, r.Data, at), nil
	}
	return nil, nil
}

// misplaced says why claimed input m (a whole response or a claim message
// on a claimed subject as stored) is where no P of TOOLGATE_RESPONSES'
// layout puts its id, "" when it is where the P now, or in the claim period
// after a change the P before, puts it. nats-server checks a publisher's
// permissions on the mapped subject, so a producer is granted its claimed
// subjects with a partition too, and could publish on one the mapping
// would not choose: that copy would claim the id a second time. It is
// refused, and nothing of it runs.
func (a *Accumulate) misplaced(ctx context.Context, m worker.Msg) (string, error) {
	if a.JS == nil {
		return "", nil
	}
	base, _, _, _ := streams.SplitClaimedPartition(m.Subject)
	tok, rest, _ := wire.SplitInTenant(base)
	rid := strings.TrimPrefix(rest, wire.InTenantClaimedRest)
	at := placeOf(m.Subject)
	fits := func(l streams.ResponsesLayout) bool {
		return at == streams.PlaceFor(tok, rid, l.Partitions) || (l.Migrating(a.Now(), a.claimTTL()) && at == streams.PlaceFor(tok, rid, l.Previous))
	}
	l, err := a.responsesLayout(ctx, false)
	if err != nil || fits(l) {
		return "", err
	}
	if l, err = a.responsesLayout(ctx, true); err != nil || fits(l) { // P may have changed since it was cached
		return "", err
	}
	if at.Unsuffixed {
		return fmt.Sprintf("subject %s is stored unmapped while TOOLGATE_RESPONSES has %d partitions: the NATS server must map the claimed subjects (docs/design/layout.md, \"Partitions\"); nothing of it runs", shortValue(m.Subject, 160), l.Partitions), nil
	}
	return fmt.Sprintf("subject %s names partition %d, where %d partitions never put response id %s: a claimed subject is published without a partition, the server picks it; nothing of it runs",
		shortValue(m.Subject, 160), at.K, l.Partitions, shortValue(rid, 64)), nil
}
