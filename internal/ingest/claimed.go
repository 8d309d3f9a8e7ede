package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// The claim on the claimed subjects (issue 30). A response id is claimed
// by the one message TOOLGATE_RESPONSES keeps on its claimed subject
// toolgate.in.t.<tenant>.response.<rid> for the claim period: a producer's
// whole response published there (the server refuses a second message,
// pkg/producer reads it back), or, for input on any other subject (the
// shared and batch subjects, an asserting user's, a stream at assembly), a
// headers-only claim message accumulate publishes there, one write as the
// key-value create of before. Accumulate reads the claimed subjects too and
// passes over its own claim messages, proven by a tag of its seal key.

// Headers of a claim message.
const (
	HeaderClaimKind = "Toolgate-Claim-Kind" // response or stream
	HeaderClaimHash = "Toolgate-Claim-Hash" // the claim's content hash (claim.go)
	HeaderClaimAt   = "Toolgate-Claim-At"   // when it was claimed, RFC 3339
	// HeaderClaimTag is accumulate's proof that it wrote the claim
	// (seal.Keyring.Tag over the subject, kind, hash and time).
	HeaderClaimTag = "Toolgate-Claim-Tag"
)

// CodeUnprovenClaim refuses a claim message on a claimed subject that
// accumulate cannot prove it wrote: a producer may publish on its own
// tenant's claimed subjects, and a claim it forged there is bad input,
// recorded like any other (it holds the id: a response sent under it after
// is refused).
const CodeUnprovenClaim = "unproven_claim"

// DefaultClaimTTL is how long a response id stays claimed when
// Accumulate.ClaimTTL is unset (streams.Settings.ResponseIDTTL's default).
const DefaultClaimTTL = 7 * 24 * time.Hour

// kvClaimsCheck is how long kvClaimsLive's answer is kept.
const kvClaimsCheck = time.Minute

// claimedRID is the response id of a claimed subject, ok false for any
// other subject.
func claimedRID(subject string) (string, bool) {
	base, _, _, ok := streams.SplitClaimedPartition(subject) // as stored: with P > 1, ".<k>" follows the id
	if !ok {
		return "", false
	}
	_, rest, _ := wire.SplitInTenant(base)
	return strings.TrimPrefix(rest, wire.InTenantClaimedRest), true
}

// onClaimed reports whether subject is a claimed subject: its message is
// the claim.
func onClaimed(subject string) bool {
	_, ok := claimedRID(subject)
	return ok
}

// isClaimMessage reports whether h are a claim message's headers.
func isClaimMessage(h nats.Header) bool { return h.Get(HeaderClaimKind) != "" }

// tagKeys is the keyring accumulate proves its claim messages with; nil
// without seal keys (handler tests).
func (a *Accumulate) tagKeys() *seal.Keyring {
	if a.Emit == nil {
		return nil
	}
	return a.Emit.Seals
}

func claimTagFields(subject string, h nats.Header) []string {
	return []string{subject, h.Get(HeaderClaimKind), h.Get(HeaderClaimHash), h.Get(HeaderClaimAt)}
}

// handleClaimMessage is a claim message read as input on a claimed
// subject: accumulate's own (its tag verifies with its seal key) is passed
// over, it claimed an input handled elsewhere; any other is refused
// (CodeUnprovenClaim) with a result and a dead letter. Without accumulate's
// seal key (a deployment running without keys) nothing can be proven and
// every claim message is passed over: a producer can then withhold only its
// own tenant's ids, which its grant lets it use anyway.
func (a *Accumulate) handleClaimMessage(m worker.Msg, rid string) ([]worker.Output, error) {
	if a.ownClaim(m) {
		return nil, nil
	}
	tok, _, _ := wire.SplitInTenant(m.Subject)
	return a.conflict(m, rid, "", laneTenant(tok), call.Rejected, CodeUnprovenClaim, fmt.Sprint(m.StreamSeq),
		fmt.Sprintf("a claim message on %s that toolgate did not write: nothing runs; response id %s stays used", shortValue(m.Subject, 160), rid))
}

// ownClaim reports whether m, a claim message, is accumulate's own: its
// tag verifies with accumulate's seal key, or there is no key to verify
// with.
func (a *Accumulate) ownClaim(m worker.Msg) bool {
	kr := a.tagKeys()
	return !kr.Has(streams.Accumulate) || kr.TagValid(streams.Accumulate, m.Header.Get(HeaderClaimTag), claimTagFields(claimedBase(m.Subject), m.Header)...)
}

// PassesOver reports whether Handle passes m over without a word: one of
// accumulate's own claim messages, read back on its claimed subject. The
// stage leaves such a message out of its traces (tracing.Handler's
// untraced), so a call's trace holds the accumulate span that made its
// calls, not a second one for its claim.
func (a *Accumulate) PassesOver(m worker.Msg) bool {
	_, claimed := claimedRID(m.Subject)
	return claimed && isClaimMessage(m.Header) && a.ownClaim(m)
}

// claimByMessage claims rid for tenant with c by a claim message on its
// claimed subject, for input m that came elsewhere. It returns nil when
// the claim is stored (or was, by a redelivery of m: its message id is m's)
// or the subject holds the same content already, else the claim that holds
// it.
func (a *Accumulate) claimByMessage(ctx context.Context, m worker.Msg, tenant, rid string, c claim) (*claim, error) {
	subj := streams.InTenantClaimed(tenant, rid)
	at := a.Now().UTC()
	h := nats.Header{}
	h.Set(HeaderClaimKind, c.Kind)
	h.Set(HeaderClaimHash, c.Hash)
	h.Set(HeaderClaimAt, at.Format(time.RFC3339Nano))
	h.Set(streams.HeaderResponseID, rid)
	if tag := a.tagKeys().Tag(streams.Accumulate, claimTagFields(subj, h)...); tag != "" {
		h.Set(HeaderClaimTag, tag)
	}
	// A whole response's message id (<rid>:<digest>, pkg/producer): the
	// same response published on the claimed subject within the duplicate
	// window is then a duplicate there, and after it the producer reads
	// the same id back (ErrDuplicate).
	if id := m.Header.Get(nats.MsgIdHdr); id != "" && c.Kind == "response" {
		h.Set(nats.MsgIdHdr, id)
	}
	_, err := a.JS.PublishMsg(ctx, &nats.Msg{Subject: subj, Header: h})
	if err == nil {
		return nil, nil
	}
	if !claimTaken(err) {
		return nil, fmt.Errorf("accumulate: claim response id %s: %w", rid, err)
	}
	held, err := a.heldClaim(ctx, subj)
	if err != nil {
		return nil, err
	}
	if held == nil {
		return nil, fmt.Errorf("accumulate: the claim of response id %s expired while read: claiming again", rid)
	}
	if held.Kind == c.Kind && held.Hash == c.Hash {
		return nil, nil
	}
	return held, nil
}

// claimTaken reports whether err is the server refusing a message on a
// claimed subject that holds one already (JetStream error 10077,
// DiscardNewPerSubject).
func claimTaken(err error) bool {
	var ae *jetstream.APIError
	return errors.As(err, &ae) && ae.ErrorCode == wire.ClaimedFullCode && ae.Description == wire.ClaimedFullDescription
}

// heldClaim is the claim the message on claimed subject holds, read by
// direct get wherever a P put it (lastClaimed): a claim message's kind and
// hash, or a whole response's (claimWhole of its sender, as it was when
// stored, and body); nil when none is stored.
func (a *Accumulate) heldClaim(ctx context.Context, subject string) (*claim, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	r, err := a.lastClaimed(ctx, subject)
	if err != nil || r == nil {
		return nil, err
	}
	at, _ := time.Parse(time.RFC3339Nano, r.Header.Get("Nats-Time-Stamp"))
	return a.claimOf(subject, r.Header, r.Data, at), nil
}

// claimOf is the claim a message stored at at on claimed subject (its
// base) holds: a claim message's kind and hash, or a whole response's.
func (a *Accumulate) claimOf(subject string, h nats.Header, data []byte, at time.Time) *claim {
	if isClaimMessage(h) {
		if !a.ownClaim(worker.Msg{Subject: subject, Header: h}) { // a producer's forgery holds the id, matching nothing
			return &claim{Kind: "response", Hash: "unproven claim", At: at}
		}
		c := claim{Kind: h.Get(HeaderClaimKind), Hash: h.Get(HeaderClaimHash), At: at}
		if t, err := time.Parse(time.RFC3339Nano, h.Get(HeaderClaimAt)); err == nil {
			c.At = t
		}
		return &c
	}
	s := a.senderOn(subject, h, at)
	if s.err != nil { // a response refused for its sender: it holds the id, with content no sender shares
		return &claim{Kind: "response", Hash: "refused sender", At: at}
	}
	c := claimWhole(s, data)
	c.At = at
	return &c
}

// kvLive caches whether the response-ids bucket may hold a live claim.
type kvLive struct {
	mu      sync.Mutex
	checked time.Time
	live    bool
}

// kvClaimsLive reports whether the response-ids bucket, where claims were
// written before they moved to the claimed subjects, may hold a claim
// younger than the claim period: it holds a key and its last was written
// within ClaimTTL. Asked once a minute (a stream info), so a fresh
// deployment, or one a week after the upgrade, reads no claim there.
func (a *Accumulate) kvClaimsLive(ctx context.Context) (bool, error) {
	a.kvl.mu.Lock()
	defer a.kvl.mu.Unlock()
	now := a.Now()
	if !a.kvl.checked.IsZero() && now.Sub(a.kvl.checked) < kvClaimsCheck && !now.Before(a.kvl.checked) {
		return a.kvl.live, nil
	}
	st, err := a.JS.Stream(ctx, "KV_"+streams.BucketResponseIDs)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		a.kvl.live = false
	case err != nil:
		return false, fmt.Errorf("accumulate: bucket %s: %w", streams.BucketResponseIDs, err)
	default:
		state := st.CachedInfo().State
		a.kvl.live = state.Msgs > 0 && now.Sub(state.LastTime) < a.claimTTL()
	}
	a.kvl.checked = now
	return a.kvl.live, nil
}

func (a *Accumulate) claimTTL() time.Duration {
	if a.ClaimTTL <= 0 {
		return DefaultClaimTTL
	}
	return a.ClaimTTL
}
