package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/kvcas"
	"github.com/toolgate/toolgate/streams"
)

// Errors of the store. A caller that gets ErrConflict read a record that
// changed since: read it again and decide again.
var (
	ErrNotFound = errors.New("approval: no approval record for this call")
	ErrExists   = errors.New("approval: a record for this call already exists")
	ErrConflict = errors.New("approval: the record changed since it was read")
	ErrDecided  = errors.New("approval: the call is no longer pending")
	ErrChanged  = errors.New("approval: the call's arguments are not the ones you reviewed")
)

// Store keeps records in the approvals bucket, keyed by call id. It is safe
// for concurrent use by several replicas: every change is a compare-and-set
// on the record's revision.
type Store struct {
	kv jetstream.KeyValue
	// OnMalformed, when set, is told of each malformed record a read met,
	// once per key and revision (log it, count it); the read itself fails
	// with an error wrapping ErrMalformed.
	OnMalformed func(key string, err error)

	mu   sync.Mutex
	seen map[string]uint64 // malformed revisions already told, bounded
}

// NewStore wraps the approvals bucket (streams.BucketApprovals).
func NewStore(kv jetstream.KeyValue) *Store { return &Store{kv: kv} }

// Get returns the record of callID and its revision, or ErrNotFound.
func (s *Store) Get(ctx context.Context, callID string) (Record, uint64, error) {
	e, err := s.kv.Get(ctx, callID)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Record{}, 0, ErrNotFound
	}
	if err != nil {
		return Record{}, 0, fmt.Errorf("approval: read %s: %w", callID, err)
	}
	r, err := Decode(callID, e.Value())
	if err != nil {
		s.malformed(callID, e.Revision(), err)
		return Record{}, e.Revision(), err
	}
	return r, e.Revision(), nil
}

// maxSeen bounds the memory of malformed revisions already told: past it
// the memory starts afresh (a record may then be told twice).
const maxSeen = 1024

// malformed tells OnMalformed of a malformed record, once per revision.
func (s *Store) malformed(key string, rev uint64, err error) {
	if s.OnMalformed == nil {
		return
	}
	s.mu.Lock()
	v, ok := s.seen[key]
	told := ok && v == rev
	if !told {
		if s.seen == nil || len(s.seen) >= maxSeen {
			s.seen = map[string]uint64{}
		}
		s.seen[key] = rev
	}
	s.mu.Unlock()
	if !told {
		s.OnMalformed(key, err)
	}
}

// Create stores a new record, or fails with ErrExists.
func (s *Store) Create(ctx context.Context, r Record) (uint64, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return 0, fmt.Errorf("approval: %w", err)
	}
	rev, err := s.kv.Create(ctx, r.CallID, data)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return 0, ErrExists
	}
	if err != nil {
		return 0, fmt.Errorf("approval: create %s: %w", r.CallID, err)
	}
	return rev, nil
}

// Update replaces the record at revision rev, or fails with ErrConflict
// when it changed since.
func (s *Store) Update(ctx context.Context, r Record, rev uint64) (uint64, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return 0, fmt.Errorf("approval: %w", err)
	}
	nrev, err := s.kv.Update(ctx, r.CallID, data, rev)
	if err != nil {
		if kvcas.Conflict(err) {
			return 0, ErrConflict
		}
		return 0, fmt.Errorf("approval: update %s: %w", r.CallID, err)
	}
	return nrev, nil
}

// Decide moves the pending record of callID to state (Approved or Denied)
// with compare-and-set, and returns the decided record and its revision.
// wantHash, when not empty, must prefix the record's argument hash: the
// operator approves exactly what was shown. A record past its expiry cannot
// be approved (the sweeper ends it as expired).
func (s *Store) Decide(ctx context.Context, callID string, state State, by, reason, wantHash string, now time.Time) (Record, uint64, error) {
	if state != Approved && state != Denied {
		return Record{}, 0, fmt.Errorf("approval: a human decides approved or denied, not %s", state)
	}
	if strings.TrimSpace(by) == "" {
		return Record{}, 0, errors.New("approval: say who decides (--by NAME): it is kept in the call's history")
	}
	r, rev, err := s.Get(ctx, callID)
	if errors.Is(err, ErrMalformed) {
		return r, 0, fmt.Errorf("%w; it cannot be decided: the policy stage denies the call once it can tell which call it is", err)
	}
	if err != nil {
		return r, 0, err
	}
	switch {
	case r.State != Pending:
		return r, rev, fmt.Errorf("%w: call %s is already %s (by %s)", ErrDecided, callID, r.State, r.By)
	case wantHash != "" && !strings.HasPrefix(r.ArgsHash, wantHash):
		return r, rev, fmt.Errorf("%w: call %s now has argument hash %s, not %s: review it again", ErrChanged, callID, r.ArgsHash, wantHash)
	case state == Approved && r.Due(now):
		return r, rev, fmt.Errorf("%w: call %s expired at %s; it ends as approval_expired", ErrDecided, callID, r.ExpiresAt.Format(time.RFC3339))
	}
	d := r.Decided(state, by, reason, now)
	nrev, err := s.Update(ctx, d, rev)
	return d, nrev, err
}

// Resume publishes a decided record's envelope back to the policy gate,
// which reads the record and moves the call on, then marks the record
// resumed. Publishing twice is harmless: the message id suppresses a
// duplicate, and the policy gate judges by the record, not the message.
func (s *Store) Resume(ctx context.Context, js jetstream.JetStream, r Record, rev uint64) error {
	if r.State == Pending {
		return fmt.Errorf("approval: call %s is still pending", r.CallID)
	}
	m := nats.NewMsg(streams.Gate(streams.Policy))
	m.Data = r.Envelope
	m.Header.Set(streams.HeaderCallID, r.CallID)
	m.Header.Set(streams.HeaderTool, r.Tool)
	m.Header.Set(HeaderDecision, string(r.State))
	m.Header.Set(nats.MsgIdHdr, fmt.Sprintf("%s:approval:%s:%s", r.CallID, r.State, ShortHash(r.ArgsHash)))
	if _, err := js.PublishMsg(ctx, m); err != nil {
		return fmt.Errorf("approval: resume %s: %w", r.CallID, err)
	}
	r.Resumed = true
	if _, err := s.Update(ctx, r, rev); err != nil && !errors.Is(err, ErrConflict) {
		return err // published; the sweeper may publish again, harmlessly
	}
	return nil
}

// ShortHash is the first 16 digits of an argument hash, as shown to an
// operator; a shorter (malformed) hash is returned whole.
func ShortHash(h string) string {
	if len(h) > 16 {
		return h[:16]
	}
	return h
}

// HeaderDecision tells a reader of toolgate.gate.policy which decision
// resumed the envelope; the policy gate itself trusts only the record.
const HeaderDecision = "Toolgate-Approval"

// Keys lists the call ids that have a record.
func (s *Store) Keys(ctx context.Context) ([]string, error) {
	lister, err := s.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("approval: list: %w", err)
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	return keys, nil
}

// Delete removes a record at revision rev.
func (s *Store) Delete(ctx context.Context, callID string, rev uint64) error {
	if err := s.kv.Delete(ctx, callID, jetstream.LastRevision(rev)); err != nil {
		if kvcas.Conflict(err) {
			return ErrConflict
		}
		return fmt.Errorf("approval: delete %s: %w", callID, err)
	}
	return nil
}
