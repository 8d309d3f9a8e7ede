package idem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// KV is the embedded store: a JetStream key-value bucket with
// compare-and-set by revision. Retention is the bucket's TTL (see
// streams.Settings.IdemTTL); the per-call retention argument is ignored.
type KV struct{ kv jetstream.KeyValue }

// NewKV returns a store on bucket kv.
func NewKV(kv jetstream.KeyValue) *KV { return &KV{kv: kv} }

func callKey(callID string) string { return "call." + callID }

// Claim implements Store. The call binding is created first, so a second
// fingerprint for the same call id never reaches the record.
func (s *KV) Claim(ctx context.Context, rec Record, _ time.Duration) (Record, bool, error) {
	rec.State = Pending
	if _, err := s.kv.Create(ctx, callKey(rec.CallID), []byte(rec.Fingerprint)); err != nil {
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return Record{}, false, fmt.Errorf("idem: kv bind: %w", err)
		}
		e, err := s.kv.Get(ctx, callKey(rec.CallID))
		if err != nil {
			return Record{}, false, fmt.Errorf("idem: kv bind: %w", err)
		}
		if string(e.Value()) != rec.Fingerprint {
			return Record{}, false, ErrConflict
		}
	}
	if len(rec.Charges) > 0 { // kv_limit.go: charge only a call not claimed yet
		existing, _, found, err := s.get(ctx, rec.Key)
		if err != nil {
			return Record{}, false, err
		}
		if found {
			return existingFor(rec, existing), false, nil
		}
		if err := s.chargeAll(ctx, rec); err != nil {
			return Record{}, false, err
		}
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return Record{}, false, fmt.Errorf("idem: %w", err)
	}
	if _, err := s.kv.Create(ctx, rec.Key, data); err == nil {
		return rec, true, nil
	} else if !errors.Is(err, jetstream.ErrKeyExists) {
		return Record{}, false, fmt.Errorf("idem: kv claim: %w", err)
	}
	existing, _, found, err := s.get(ctx, rec.Key)
	if err != nil {
		return Record{}, false, err
	}
	if !found { // deleted between Create and Get: a release; try once more
		return s.Claim(ctx, rec, 0)
	}
	return existingFor(rec, existing), false, nil
}

// Complete implements Store.
func (s *KV) Complete(ctx context.Context, key, owner string, ok bool, result json.RawMessage, errText string, _ time.Duration) error {
	cur, rev, found, err := s.get(ctx, key)
	if err != nil {
		return err
	}
	if !found || cur.Malformed != "" || cur.Owner != owner || cur.State != Pending {
		return fmt.Errorf("idem: complete %s: %w", key, ErrNotOwner)
	}
	cur.State, cur.OK, cur.Result, cur.Error, cur.CompletedAt = Completed, ok, result, errText, time.Now().UTC()
	data, err := json.Marshal(cur)
	if err != nil {
		return fmt.Errorf("idem: %w", err)
	}
	if _, err := s.kv.Update(ctx, key, data, rev); err != nil {
		return fmt.Errorf("idem: kv complete: %w", err)
	}
	return nil
}

// Release implements Store.
func (s *KV) Release(ctx context.Context, key, owner string) error {
	cur, rev, found, err := s.get(ctx, key)
	if err != nil {
		return err
	}
	if !found || cur.Malformed != "" || cur.Owner != owner || cur.State != Pending {
		return fmt.Errorf("idem: release %s: %w", key, ErrNotOwner)
	}
	if err := s.kv.Delete(ctx, key, jetstream.LastRevision(rev)); err != nil {
		return fmt.Errorf("idem: kv release: %w", err)
	}
	for _, c := range cur.Charges { // given back after the record is gone: a crash between keeps the limit stricter, never looser
		if err := s.uncharge(ctx, key, c); err != nil {
			return fmt.Errorf("idem: kv release: %w", err)
		}
	}
	return nil
}

// Get implements Store.
func (s *KV) Get(ctx context.Context, key string) (Record, bool, error) {
	rec, _, found, err := s.get(ctx, key)
	return rec, found, err
}

func (s *KV) get(ctx context.Context, key string) (Record, uint64, bool, error) {
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Record{}, 0, false, nil
	}
	if err != nil {
		return Record{}, 0, false, fmt.Errorf("idem: kv get: %w", err)
	}
	return Decode(key, e.Value()), e.Revision(), true, nil
}
