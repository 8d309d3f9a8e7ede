package approval

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/dlq"
)

// Sweeper ends calls nobody decided in time and finishes decisions whose
// resume was lost. Every policy replica runs one; compare-and-set on each
// record makes them safe together: one replica wins each change, the others
// see ErrConflict and move on.
type Sweeper struct {
	Store *Store
	JS    jetstream.JetStream
	// Every is the sweep interval; default 5s.
	Every time.Duration
	// Grace is how long a decided record may stay unresumed before the
	// sweeper publishes it again (the deciding command may have died between
	// writing and publishing); default 30s.
	Grace time.Duration
	// Retention is how long a resumed record is kept, so that the same call
	// arriving again meets its decision; default 7 days.
	Retention time.Duration
	Now       func() time.Time
	Log       zerolog.Logger
	// Calls is the calls bucket (streams.BucketCalls). When set, a
	// malformed record whose waiting envelope is lost too is settled from
	// the call's status record, if that says the call waits for approval.
	Calls jetstream.KeyValue
}

// Run sweeps every Every until ctx is done. A panic in one sweep is
// logged and the next sweep runs as usual.
func (s *Sweeper) Run(ctx context.Context) {
	every := s.Every
	if every <= 0 {
		every = 5 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.safeSweep(ctx); err != nil && ctx.Err() == nil {
				s.Log.Warn().Err(err).Msg("approval sweep")
			}
		}
	}
}

func (s *Sweeper) safeSweep(ctx context.Context) (n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("approval: sweep panicked: %v", p)
		}
	}()
	return s.Sweep(ctx)
}

// Sweep looks at every record once: a pending record past its expiry is
// moved to expired and resumed (the policy gate ends the call as
// approval_expired), a decided record left unresumed past Grace is resumed
// again, and a resumed record older than Retention is deleted. A malformed
// record is told to Store.OnMalformed and skipped, unless its waiting
// envelope is intact: then it is replaced by a denied record for that
// envelope and resumed, so the call ends approval_denied instead of waiting
// forever. A panic on one record is recovered and told the same way. It
// returns how many calls it resumed.
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
	keys, err := s.Store.Keys(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, k := range keys {
		resumed, err := s.sweepOne(ctx, k)
		if resumed {
			n++
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// sweepOne handles the record of key k; resumed says it published the call.
func (s *Sweeper) sweepOne(ctx context.Context, k string) (resumed bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.Store.malformed(k, 0, fmt.Errorf("%w %s: sweeping it panicked: %v", ErrMalformed, k, p))
			resumed, err = false, nil
		}
	}()
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	grace, retention := s.Grace, s.Retention
	if grace <= 0 {
		grace = 30 * time.Second
	}
	if retention <= 0 {
		retention = 7 * 24 * time.Hour
	}
	r, rev, err := s.Store.Get(ctx, k)
	switch {
	case errors.Is(err, ErrNotFound):
		return false, nil
	case errors.Is(err, ErrMalformed):
		return s.settleMalformed(ctx, k, rev, err, now())
	case err != nil:
		return false, err
	}
	t := now()
	switch {
	case r.Due(t):
		d := r.Decided(Expired, "toolgate", fmt.Sprintf("no decision within %s", r.ExpiresAt.Sub(r.RequestedAt)), t)
		nrev, err := s.Store.Update(ctx, d, rev)
		if errors.Is(err, ErrConflict) {
			return false, nil // decided or expired by someone else meanwhile
		}
		if err != nil {
			return false, err
		}
		r, rev = d, nrev
	case r.State != Pending && !r.Resumed && t.Sub(r.DecidedAt) >= grace:
	case r.Resumed && t.Sub(r.DecidedAt) >= retention:
		if err := s.Store.Delete(ctx, k, rev); err != nil && !errors.Is(err, ErrConflict) {
			return false, err
		}
		return false, nil
	default:
		return false, nil
	}
	if err := s.Store.Resume(ctx, s.JS, r, rev); err != nil {
		return false, err
	}
	return true, nil
}

// settleMalformed replaces a malformed record whose waiting envelope is
// intact (or can be rebuilt from the call's status record) by a record
// denied by toolgate, and resumes the call, which ends approval_denied. A
// record that names no waiting call is left as it is (Get already told
// OnMalformed).
func (s *Sweeper) settleMalformed(ctx context.Context, k string, rev uint64, why error, now time.Time) (bool, error) {
	ent, err := s.Store.kv.Get(ctx, k)
	if err != nil || ent.Revision() != rev {
		return false, nil // changed or gone meanwhile: the next sweep looks again
	}
	e, ok := Salvage(k, ent.Value())
	if !ok {
		if e, ok = s.fromStatus(ctx, k); !ok {
			return false, nil
		}
	}
	nr, err := NewRecord(e, "its approval record was malformed", 0, now)
	if err != nil {
		return false, nil
	}
	d := nr.Decided(Denied, "toolgate", "the approval record of this call was malformed ("+why.Error()+"), so no decision can be read from it; ask for the call again", now)
	nrev, err := s.Store.Update(ctx, d, rev)
	if errors.Is(err, ErrConflict) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := s.Store.Resume(ctx, s.JS, d, nrev); err != nil {
		return false, err
	}
	return true, nil
}

// fromStatus rebuilds the waiting envelope of call k from its status record
// when that record is well-formed and says approval_required. The arguments
// are not in it: the call is only ever denied from it, never run.
func (s *Sweeper) fromStatus(ctx context.Context, k string) (call.Envelope, bool) {
	if s.Calls == nil {
		return call.Envelope{}, false
	}
	ent, err := s.Calls.Get(ctx, k)
	if err != nil {
		return call.Envelope{}, false
	}
	r, err := dlq.DecodeStatus(k, ent.Value())
	if err != nil || r.Status != call.ApprovalRequired || r.Tool == "" {
		return call.Envelope{}, false
	}
	e := call.Envelope{
		CallID: r.CallID, ResponseID: r.ResponseID, Provider: r.Provider, Model: r.Model, Source: r.Source, ToolName: r.Tool,
		Status: call.ApprovalRequired, RepairAttempts: r.RepairAttempts, Replays: r.Replays, ToolRevision: r.ToolRevision,
		Batch: call.Batch{ID: r.ResponseID}, History: r.History,
	}
	if len(r.History) > 0 {
		e.CreatedAt = r.History[0].At
	}
	e.Note("its approval record was malformed and held no readable call: rebuilt from its status record, without its arguments")
	return e, true
}
