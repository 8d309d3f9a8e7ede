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
// no stream's.
func streamOf(subject string) (streamRef, bool) {
	if rid, ok := strings.CutPrefix(subject, streams.InStreamPrefix); ok {
		return streamRef{rid: rid}, true
	}
	if tok, rest, ok := wire.SplitInTenant(subject); ok {
		if rid, ok := strings.CutPrefix(rest, "stream."); ok {
			return streamRef{tok: tok, rid: rid}, true
		}
	}
	return streamRef{}, false
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
