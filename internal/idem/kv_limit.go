package idem

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/kvcas"
	"github.com/toolgate/toolgate/internal/limit"
)

// On the embedded store a limit's usage for one key is one entry of the
// idempotency bucket, "lim.NAME.HASH" (HASH: the key's sha256, cut to 32
// hex digits), holding the window's charges; it is changed only by
// compare-and-set on its revision, so its changes are linearizable (one
// JetStream stream, expected last sequence per subject).
//
// JetStream key-value has no transaction over several keys, so a claim
// under limits is: bind the call id; stop if the record exists (nothing is
// charged again); charge each limit by compare-and-set, the charge's id
// being the idempotency key (a charge already there is this call's own,
// from an attempt that died before it claimed: it is not charged again);
// then create the record. A full limit takes back the charges this claim
// made and refuses. What that gives: a call never runs uncharged (the
// record is created only after every charge is in) and is charged once
// however often it is delivered; a process that dies between charging and
// claiming leaves a charge without a run until the window passes it (the
// limit is stricter for that time, never looser), and the call's next
// delivery finds its charge and claims. Time is the execute process's
// clock, not one server's as with Redis. A key's entry lives at most the
// bucket's TTL after its last charge (streams.Settings.IdemTTL, 24h): a
// window longer than that forgets older charges. The embedded store bounds
// neither keys per limit (max_keys is Redis's) nor anything beyond the
// bucket's own limits.
type kvLog struct {
	C []kvCharge `json:"c"`
}

type kvCharge struct {
	ID string `json:"id"`
	T  int64  `json:"t"` // unix ms
	W  int64  `json:"w"`
}

func kvLimitKey(c limit.Charge) string {
	sum := sha256.Sum256([]byte(c.Key))
	return "lim." + c.Limit + "." + hex.EncodeToString(sum[:16])
}

// casTries bounds the compare-and-set retries of one limit entry.
const casTries = 1000

// logOp changes the log of c by fn under compare-and-set; fn returns
// whether to write and an error that stops (and is returned).
func (s *KV) logOp(ctx context.Context, c limit.Charge, fn func(l *kvLog, now int64) (bool, error)) error {
	key := kvLimitKey(c)
	for try := range casTries {
		if try > 0 { // a conflict: another writer won; step aside a moment, then read again
			if err := conflictPause(ctx, try); err != nil {
				return fmt.Errorf("idem: kv limit %s: %w", c.Limit, err)
			}
		}
		var l kvLog
		var rev uint64
		e, err := s.kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return fmt.Errorf("idem: kv limit: %w", err)
		default:
			rev = e.Revision()
			if json.Unmarshal(e.Value(), &l) != nil {
				l = kvLog{} // unreadable: written by no toolgate; start again
			}
		}
		now := time.Now().UnixMilli()
		if c.Window > 0 { // a charge read back from a record has no window: keep all
			cut := now - c.Window.Milliseconds()
			l.C = slices.DeleteFunc(l.C, func(k kvCharge) bool { return k.T <= cut })
		}
		write, ferr := fn(&l, now)
		if ferr != nil || !write {
			return ferr
		}
		data, _ := json.Marshal(l)
		if rev == 0 {
			_, err = s.kv.Create(ctx, key, data)
		} else {
			_, err = s.kv.Update(ctx, key, data, rev)
		}
		if err == nil {
			return nil
		}
		if !kvcas.Conflict(err) {
			return fmt.Errorf("idem: kv limit: %w", err)
		}
	}
	return fmt.Errorf("idem: kv limit %s: %d compare-and-set conflicts in a row", c.Limit, casTries)
}

// conflictPause waits a random moment, growing with the tries up to 20 ms,
// so writers that keep meeting on one key spread out instead of spinning.
func conflictPause(ctx context.Context, try int) error {
	d := time.Duration(rand.Int64N(int64(min(1<<min(try, 5), 20)) * int64(time.Millisecond)))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// charge adds the charge id to c's log unless it is there, or refuses.
func (s *KV) charge(ctx context.Context, id string, c *limit.Charge) error {
	return s.logOp(ctx, *c, func(l *kvLog, now int64) (bool, error) {
		var used int64
		for _, k := range l.C {
			if k.ID == id {
				return false, nil // this call's own charge, from an attempt that did not claim
			}
			used += k.W
		}
		if used+c.Weight <= c.Max {
			c.Used = used + c.Weight
			l.C = append(l.C, kvCharge{ID: id, T: now, W: c.Weight})
			return true, nil
		}
		le := &LimitError{Limit: c.Limit, Key: c.Key, Used: used, Max: c.Max}
		if c.Weight <= c.Max {
			need, freed := used+c.Weight-c.Max, int64(0)
			es := slices.Clone(l.C)
			slices.SortFunc(es, func(a, b kvCharge) int { return int(a.T - b.T) })
			for _, k := range es {
				if freed += k.W; freed >= need {
					le.PassAt = time.UnixMilli(k.T + c.Window.Milliseconds() + 1)
					break
				}
			}
		}
		return false, le
	})
}

// uncharge removes the charge id from c's log.
func (s *KV) uncharge(ctx context.Context, id string, c limit.Charge) error {
	return s.logOp(ctx, c, func(l *kvLog, _ int64) (bool, error) {
		n := len(l.C)
		l.C = slices.DeleteFunc(l.C, func(k kvCharge) bool { return k.ID == id })
		return len(l.C) != n, nil
	})
}

// chargeAll charges every limit of rec or none: a refusal takes back the
// charges made before it.
func (s *KV) chargeAll(ctx context.Context, rec Record) error {
	for i := range rec.Charges {
		if err := s.charge(ctx, rec.Key, &rec.Charges[i]); err != nil {
			for _, done := range rec.Charges[:i] {
				if uerr := s.uncharge(ctx, rec.Key, done); uerr != nil {
					return errors.Join(err, uerr) // kept: stricter until the window passes it
				}
			}
			return err
		}
	}
	return nil
}

// LimitUsage implements Limits.
func (s *KV) LimitUsage(ctx context.Context, c limit.Charge) (Usage, error) {
	var u Usage
	err := s.logOp(ctx, c, func(l *kvLog, _ int64) (bool, error) {
		for _, k := range l.C {
			u.Used += k.W
			u.Charges++
			if t := time.UnixMilli(k.T); u.Oldest.IsZero() || t.Before(u.Oldest) {
				u.Oldest = t
			}
		}
		return false, nil
	})
	return u, err
}
