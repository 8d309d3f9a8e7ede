package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// CodeIdentityInvalid refuses a message without a valid Toolgate-Token where
// the deployment verifies identity: nothing of it executes.
const CodeIdentityInvalid = "identity_invalid"

// sender is who sent one ingest message: the request context its calls
// carry, and its binding, which every event of one stream must share.
type sender struct {
	req     call.Request
	binding string
	err     error // the identity was refused; req is then the headers' (for the record only)
	// withheld are the roles the headers claimed and the sender was not
	// granted (unverified identity): recorded in the call's history.
	withheld []string
}

// senderOn is who sent a whole response on subject with headers h: on the
// subject of a producer user (wire.InAsResponse) the deployment allows to
// assert identity (AssertUsers), without an issuer, tenant, principal and
// roles are its headers', marked asserted; otherwise as sender says.
func (a *Accumulate) senderOn(subject string, h nats.Header, at time.Time) sender {
	user, ok := assertingUser(subject)
	if a.Identity != nil || !ok || !slices.Contains(a.AssertUsers, user) {
		return a.sender(h, at)
	}
	req := RequestOf(h)
	req.Identity = call.IdentityAsserted
	return sender{req: req, binding: strings.Join([]string{"asserted", user, req.Tenant, req.Principal, strings.Join(req.Roles, ",")}, "\x00")}
}

// assertingUser is the user whose own whole-response subject subject is
// (wire.InAsResponse); only that user may publish there.
func assertingUser(subject string) (string, bool) {
	rest, ok := strings.CutPrefix(subject, wire.InAsPrefix)
	if !ok {
		return "", false
	}
	user, ok := strings.CutSuffix(rest, ".response")
	return user, ok && user != "" && !strings.Contains(user, ".")
}

// sender is who sent a message with headers h, handled (or stored) at at.
// With a Verifier tenant, principal and roles come from the verified token
// only, and the Toolgate-Tenant, -Principal and -Roles headers are ignored;
// without one (dev mode) tenant and principal come from those headers,
// marked unverified, and roles are granted none: anyone who can publish
// could claim any role, so a policy on roles would be decoration. The
// claimed roles are recorded in the call's history (withheld).
func (a *Accumulate) sender(h nats.Header, at time.Time) sender {
	req := RequestOf(h)
	if a.Identity == nil {
		req.Identity = call.IdentityUnverified
		s := sender{req: req, binding: strings.Join([]string{"unverified", req.Tenant, req.Principal, strings.Join(req.Roles, ",")}, "\x00")}
		s.req.Roles, s.withheld = nil, req.Roles
		return s
	}
	id, err := a.Identity.VerifyAt(context.Background(), h.Get(wire.HeaderToken), at)
	if err != nil {
		return sender{req: req, err: err}
	}
	req.Tenant, req.Principal, req.Roles, req.Identity = id.Tenant, id.Principal, slices.Clone(id.Roles), call.IdentityVerified
	return sender{req: req, binding: strings.Join([]string{"verified", id.Tenant, id.Principal}, "\x00")}
}

// describe names a binding for an operator: its tenant and principal.
func describe(s sender) string {
	t, p := s.req.Tenant, s.req.Principal
	if t == "" {
		t = "(none)"
	}
	if p == "" {
		p = "(none)"
	}
	return "tenant " + shortValue(t, 64) + ", principal " + shortValue(p, 64) + " (" + s.req.Identity + ")"
}

// raw is a dead letter of m with its token replaced by the token's sha256:
// a bearer token is a credential, and dead letters are read and replayed
// by operators.
func (a *Accumulate) raw(code string, m worker.Msg, why error) worker.Output {
	return a.Emit.Raw(streams.Accumulate, code, redactToken(m), why)
}

func redactToken(m worker.Msg) worker.Msg {
	tok := m.Header.Get(wire.HeaderToken)
	if tok == "" {
		return m
	}
	h := nats.Header{}
	for k, v := range m.Header {
		h[k] = v
	}
	sum := sha256.Sum256([]byte(tok))
	h.Set(wire.HeaderToken, "redacted sha256:"+hex.EncodeToString(sum[:16]))
	m.Header = h
	return m
}
