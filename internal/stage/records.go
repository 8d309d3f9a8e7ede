package stage

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/streams"
)

// MalformedFunc is told of one malformed stored record: where it was read
// (a bucket name, or "dlq"), its key, and what is wrong with it.
type MalformedFunc func(source, key string, err error)

// malformedHook logs a malformed record with its source and key, and counts
// it in toolgate_malformed_records_total.
func malformedHook(m *metrics.Metrics, log zerolog.Logger) MalformedFunc {
	logged := logMalformed(log)
	return func(source, key string, err error) {
		m.MalformedRecord(source)
		logged(source, key, err)
	}
}

// logMalformed only logs; it is what a stage set without metrics uses.
func logMalformed(log zerolog.Logger) MalformedFunc {
	return func(source, key string, err error) {
		log.Warn().Str("source", source).Str("key", clipKey(key)).Err(err).Msg("malformed record skipped")
	}
}

// from binds fn to one source, in the shape the stores take.
func (fn MalformedFunc) from(source string) func(key string, err error) {
	return func(key string, err error) { fn(source, key, err) }
}

func clipKey(k string) string {
	if len(k) > 256 {
		return k[:256] + "..."
	}
	return k
}

// observedStore tells fn of the malformed idempotency records the store
// hands back (idem.Record.Malformed); the execute gate settles the call.
type observedStore struct {
	idem.Store
	fn func(key string, err error)
}

func observeStore(s idem.Store, fn MalformedFunc) idem.Store {
	if s == nil {
		return nil
	}
	return observedStore{Store: s, fn: fn.from(streams.BucketIdempotency)}
}

func (o observedStore) Claim(ctx context.Context, rec idem.Record, retention time.Duration) (idem.Record, bool, error) {
	got, claimed, err := o.Store.Claim(ctx, rec, retention)
	o.tell(got)
	return got, claimed, err
}

func (o observedStore) Get(ctx context.Context, key string) (idem.Record, bool, error) {
	got, found, err := o.Store.Get(ctx, key)
	o.tell(got)
	return got, found, err
}

func (o observedStore) tell(r idem.Record) {
	if r.Malformed != "" {
		o.fn(r.Key, malformedErr(r.Malformed))
	}
}

type malformedErr string

func (e malformedErr) Error() string { return string(e) }
