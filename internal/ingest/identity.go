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
}

// sender is who sent a message with headers h, handled (or stored) at at.
// With a Verifier tenant, principal and roles come from the verified token
// only, and the Toolgate-Tenant, -Principal and -Roles headers are ignored;
// without one (dev mode) they come from those headers, marked unverified.
func (a *Accumulate) sender(h nats.Header, at time.Time) sender {
	req := request(h)
	if a.Identity == nil {
		req.Identity = call.IdentityUnverified
		return sender{req: req, binding: strings.Join([]string{"unverified", req.Tenant, req.Principal, strings.Join(req.Roles, ",")}, "\x00")}
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
