package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/streams"
)

// binding holds a stream to one sender: every accepted event must carry the
// identity of the first (a verified token's tenant and principal; in dev
// mode the same Toolgate-Tenant, -Principal and -Roles headers) and the
// same provider, and a seq stored twice must hold the same payload. It is
// decided from the stored events alone (identities are checked at the time
// each event was stored), so replicas and re-reads agree.
type binding struct {
	who   func(nats.Header, time.Time) sender // nil: dev mode, headers on trust
	owner *sender                             // the first accepted event's sender
	// invalid: the first accepted event's identity was refused (no valid
	// token, a tenant not granted), the whole stream is refused with
	// invalidErr's code.
	invalid    string
	invalidErr *senderRefusal
	// conflict: why the stream is not one producer's; it ends
	// stream_conflict and nothing of it executes.
	conflict string
}

// CodeStreamConflict: a stream's events disagree (a different payload for a
// seq already stored, another identity, another provider).
const CodeStreamConflict = "stream_conflict"

func (b *binding) senderOf(ev storedEvent) sender {
	if b.who == nil {
		return (&Accumulate{}).sharedSender(ev.header, ev.at)
	}
	return b.who(ev.header, ev.at)
}

// bind checks ev's sender against the stream's; prov is the provider the
// stream named so far.
func (b *binding) bind(ev storedEvent, prov string) {
	if b.conflict != "" {
		return // the first conflict is the evidence
	}
	s := b.senderOf(ev)
	at := eventName(ev)
	switch {
	case s.err != nil && b.owner == nil:
		if b.invalid == "" {
			b.invalid = fmt.Sprintf("%s: %v", at, s.err)
			r := *refusalOf(s.err)
			r.why = b.invalid
			b.invalidErr = &r
		}
	case s.err != nil:
		b.conflict = fmt.Sprintf("%s carries no valid identity (%v); the stream's events before it came from %s", at, s.err, describe(*b.owner))
	case b.owner == nil && b.invalid != "":
		b.conflict = fmt.Sprintf("%s came from %s, after an event without a valid identity (%s)", at, describe(s), b.invalid)
	case b.owner == nil:
		b.owner = &s
	case s.binding != b.owner.binding:
		b.conflict = fmt.Sprintf("%s came from %s; the stream's events before it came from %s", at, describe(s), describe(*b.owner))
	}
	if p := ev.header.Get(streams.HeaderProvider); b.conflict == "" && p != "" && prov != "" && p != prov {
		b.conflict = fmt.Sprintf("%s names provider %q; the stream's events before it named %q", at, shortValue(p, 64), shortValue(prov, 64))
	}
}

// differs records a second copy of a stored seq: harmless when it holds the
// same payload (a producer's retry), the stream's conflict when not.
func (b *binding) differs(first, again storedEvent) {
	if b.conflict != "" || bytes.Equal(first.data, again.data) {
		return
	}
	b.conflict = fmt.Sprintf("Toolgate-Seq %d was stored twice with different payloads (stream sequences %d and %d, %d bytes sha256 %s and %d bytes sha256 %s)",
		first.seq, first.streamSeq, again.streamSeq, len(first.data), digest(first.data), len(again.data), digest(again.data))
}

func eventName(ev storedEvent) string {
	if ev.seq > 0 {
		return fmt.Sprintf("event Toolgate-Seq %d (stream sequence %d)", ev.seq, ev.streamSeq)
	}
	return fmt.Sprintf("event at stream sequence %d", ev.streamSeq)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
