package ingest

import (
	"strings"

	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// streamRef names one stream: its response id and the tenant token of its
// subject, "" for the shared toolgate.in.stream.<response-id>. Everything
// accumulate keeps of an open stream (its assembly, its progress, its
// timers, its responses-bucket mark, the read of its stored events) is
// keyed by the ref, so another tenant's events under the same response id
// are another stream, and can neither join nor end this one.
type streamRef struct {
	tok string
	rid string
}

// streamOf is the stream subject names; ok is false for a subject that is
// no stream's. A subject stored in one of TOOLGATE_IN's partitions
// (in_partitions.go) names the same stream: streamPlace says where.
func streamOf(subject string) (streamRef, bool) {
	ref, _, ok := streamPlace(subject)
	return ref, ok
}

// streamPlace is streamOf, with the partition subject is stored in (the
// unsuffixed subject of P = 1 for any subject without one).
func streamPlace(subject string) (streamRef, streams.Place, bool) {
	at := streams.Place{Unsuffixed: true}
	if base, k, parted, ok := streams.SplitInPartition(subject); ok && parted {
		subject, at = base, inPlaceOf(k, parted)
	}
	if rid, ok := strings.CutPrefix(subject, streams.InStreamPrefix); ok {
		return streamRef{rid: rid}, at, true
	}
	if tok, rest, ok := wire.SplitInTenant(subject); ok {
		if rid, ok := strings.CutPrefix(rest, "stream."); ok {
			return streamRef{tok: tok, rid: rid}, at, true
		}
	}
	return streamRef{}, at, false
}

// subject is where the stream's events are stored.
func (r streamRef) subject() string {
	if r.tok == "" {
		return streams.InStream(r.rid)
	}
	return wire.InTenantPrefix + r.tok + ".stream." + r.rid
}

// key names the stream in the responses bucket, in timers' message ids and
// in this replica's caches: the response id for the shared subject (as
// before tenants had subjects of their own), otherwise the tenant's key
// and the id, as wire.ResponseKey makes it ('=' in place of a digest's '~').
func (r streamRef) key() string {
	if r.tok == "" {
		return r.rid
	}
	return strings.Replace(r.tok, "~", "=", 1) + "=" + r.rid
}
