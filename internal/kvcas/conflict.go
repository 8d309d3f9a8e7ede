// Package kvcas says whether a JetStream key-value compare-and-set lost to
// another writer. Every store that updates a key by revision asks it, so a
// lost race reads again instead of failing, on one server and on a cluster.
package kvcas

import (
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// Conflict reports a compare-and-set (an update by revision, or a create)
// that lost to another writer, in each form a server gives it: the
// per-subject "wrong last sequence" (10071, which jetstream.ErrKeyExists
// matches); its constant form (10164), with which a clustered stream
// refuses a write racing another write of the same key still being
// replicated, and which ErrKeyExists does not match; and the client's
// jetstream.ErrKeyRevisionMismatch.
func Conflict(err error) bool {
	var ae *jetstream.APIError
	if errors.As(err, &ae) && (ae.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || ae.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
		return true
	}
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch)
}
