package approval

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
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
}

// Run sweeps every Every until ctx is done.
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
			if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
				s.Log.Warn().Err(err).Msg("approval sweep")
			}
		}
	}
}

// Sweep looks at every record once: a pending record past its expiry is
// moved to expired and resumed (the policy gate ends the call as
// approval_expired), a decided record left unresumed past Grace is resumed
// again, and a resumed record older than Retention is deleted. It returns
// how many calls it resumed.
func (s *Sweeper) Sweep(ctx context.Context) (int, error) {
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
	keys, err := s.Store.Keys(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, k := range keys {
		r, rev, err := s.Store.Get(ctx, k)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		t := now()
		switch {
		case r.Due(t):
			d := r.Decided(Expired, "toolgate", fmt.Sprintf("no decision within %s", r.ExpiresAt.Sub(r.RequestedAt)), t)
			nrev, err := s.Store.Update(ctx, d, rev)
			if errors.Is(err, ErrConflict) {
				continue // decided or expired by someone else meanwhile
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			r, rev = d, nrev
		case r.State != Pending && !r.Resumed && t.Sub(r.DecidedAt) >= grace:
		case r.Resumed && t.Sub(r.DecidedAt) >= retention:
			if err := s.Store.Delete(ctx, k, rev); err != nil && !errors.Is(err, ErrConflict) {
				errs = append(errs, err)
			}
			continue
		default:
			continue
		}
		if err := s.Store.Resume(ctx, s.JS, r, rev); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
