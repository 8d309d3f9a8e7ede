// Package idem keeps the idempotency records that let the execute gate run a
// call at most once. Two stores share one contract: Redis (production) and a
// JetStream key-value bucket (the embedded default).
package idem

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolgate/toolgate/internal/limit"
)

// State of a record.
type State string

const (
	Pending   State = "pending"   // claimed: the executor may be running or may have run
	Completed State = "completed" // the executor answered; Result holds its answer
)

// Record is what the store holds per idempotency key.
type Record struct {
	Key         string          `json:"key"`
	CallID      string          `json:"call_id"`
	Tool        string          `json:"tool"`
	Fingerprint string          `json:"fingerprint"` // sha256 of tool name and canonical arguments
	State       State           `json:"state"`
	Owner       string          `json:"owner"`
	LeaseUntil  time.Time       `json:"lease_until"`
	OK          bool            `json:"ok,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"`
	Error       string          `json:"error,omitempty"`
	ClaimedAt   time.Time       `json:"claimed_at"`
	CompletedAt time.Time       `json:"completed_at,omitzero"`
	// Charges are what the call uses of its limits (limit.go): Claim checks
	// and records them with the claim, all or none, and Release gives them
	// back. A record that already exists charges nothing again.
	Charges []limit.Charge `json:"charges,omitempty"`
	// ReplayPartition is the partition of the executors' replay bucket the
	// claim's request named (execute.Request.ReplayPartition): a status
	// query about the claim asks there, whatever P is by then. Absent (0)
	// in records written before partitions, and with P = 1.
	ReplayPartition int `json:"replay_partition,omitempty"`
	// Malformed is set, never stored, when the stored record could not be
	// read or did not describe its key (Decode): nothing in it is trusted.
	Malformed string `json:"-"`
}

// LeaseLive reports whether a pending record's owner may still be running.
func (r Record) LeaseLive(now time.Time) bool { return r.State == Pending && now.Before(r.LeaseUntil) }

// Errors a store returns.
var (
	// ErrConflict: the call id was already bound to other arguments.
	ErrConflict = errors.New("idem: call id already executed with different arguments")
	// ErrNotOwner: Complete or Release by someone who does not hold the claim.
	ErrNotOwner = errors.New("idem: claim is not held by this owner")
)

// Store is the contract both implementations pass (contract_test.go).
type Store interface {
	// Claim binds the call id to the fingerprint and creates a pending record
	// for rec.Key if none exists. It returns claimed=true when this caller
	// now owns the key; otherwise the existing record. A call id bound to
	// another fingerprint yields ErrConflict. The record is kept for
	// retention, not for the lease: an expired lease must stay visible so
	// that the next delivery sees outcome unknown instead of running again.
	Claim(ctx context.Context, rec Record, retention time.Duration) (existing Record, claimed bool, err error)
	// Complete stores the executor's answer on a pending record held by owner.
	Complete(ctx context.Context, key, owner string, ok bool, result json.RawMessage, errText string, retention time.Duration) error
	// Release deletes a pending record held by owner: only when the executor
	// is known not to have run (no responder, connection refused).
	Release(ctx context.Context, key, owner string) error
	// Get returns the record for key. A stored record that cannot be read
	// is found, as a stand-in with Malformed set (Claim's existing too).
	Get(ctx context.Context, key string) (Record, bool, error)
}

// Limits reads a limit's usage; both stores implement it (limits show).
type Limits interface {
	LimitUsage(ctx context.Context, c limit.Charge) (Usage, error)
}

// Key is the seed's buildIdempotencyKey: sha256 over call id, tool name and
// the canonical validated arguments.
func Key(callID, tool string, canonicalArgs []byte) string {
	h := sha256.New()
	h.Write([]byte(callID))
	h.Write([]byte{0})
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(canonicalArgs)
	return hex.EncodeToString(h.Sum(nil))
}

// Fingerprint identifies what a call asks for, independent of its id.
func Fingerprint(tool string, canonicalArgs []byte) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(canonicalArgs)
	return hex.EncodeToString(h.Sum(nil))
}
