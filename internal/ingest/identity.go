package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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

// senderOn is who sent a message on subject with headers h, handled (or
// stored) at at. On a tenant's own subject (wire.InTenantPrefix), which
// only that tenant's producer user may publish on, the tenant is the
// subject's (laneSender). On the subject of a producer user
// (wire.InAsResponse) the deployment allows to assert identity
// (AssertUsers), without an issuer, tenant, principal and roles are its
// headers', marked asserted. Anywhere else it is as sharedSender says.
func (a *Accumulate) senderOn(subject string, h nats.Header, at time.Time) sender {
	if tok, _, ok := wire.SplitInTenant(subject); ok {
		return a.laneSender(tok, h, at)
	}
	user, ok := assertingUser(subject)
	if a.Identity != nil || !ok || !slices.Contains(a.AssertUsers, user) {
		return a.sharedSender(h, at)
	}
	req := RequestOf(h)
	req.Identity = call.IdentityAsserted
	return sender{req: req, binding: strings.Join([]string{"asserted", user, req.Tenant, req.Principal, strings.Join(req.Roles, ",")}, "\x00")}
}

// sharedSender is who sent a message on a subject every producer may
// publish on (toolgate.in.response, toolgate.in.stream.<id>): as sender
// says, except that without an issuer a Toolgate-Tenant header is refused
// (tenant_not_granted) — anyone may publish there, so a tenant it names
// would let one tenant's producer run calls as another and squat its
// response ids. Refused rather than run tenant-less: the call would run
// under an identity its producer did not ask for, where it cannot read the
// result.
func (a *Accumulate) sharedSender(h nats.Header, at time.Time) sender {
	s := a.sender(h, at)
	if a.Identity != nil || s.err != nil || s.req.Tenant == "" {
		return s
	}
	s.err = &senderRefusal{code: CodeTenantNotGranted, lane: "", why: fmt.Sprintf("header %s names tenant %s on %s, which every producer may publish on, and no issuer verifies it",
		wire.HeaderTenant, shortValue(s.req.Tenant, 64), wire.SubjectInResponse+" or "+wire.InStreamPrefix+"<response-id>"),
		hint: fmt.Sprintf("publish as that tenant's producer user on its own subjects, %s or %s, or leave the header out", wire.InTenantResponse(s.req.Tenant), wire.InTenantStream(s.req.Tenant, "<response-id>"))}
	return s
}

// laneSender is who sent a message on tenant token tok's own subject: the
// tenant is the subject's. With an issuer, the token's tenant must be it;
// without one, a Toolgate-Tenant header must be it too (a producer that
// names another tenant is confused or hostile: refused, tenant_not_granted).
func (a *Accumulate) laneSender(tok string, h nats.Header, at time.Time) sender {
	s := a.sender(h, at)
	lane := laneTenant(tok)
	switch {
	case s.err != nil:
		if r, ok := s.err.(*senderRefusal); ok {
			r.lane = lane
		} else {
			s.err = &senderRefusal{code: CodeIdentityInvalid, lane: lane, why: s.err.Error(), hint: tokenHint}
		}
		return s
	case !validTenantToken(tok):
		s.err = &senderRefusal{code: CodeTenantNotGranted, why: fmt.Sprintf("subject token %q is not a tenant", shortValue(tok, 64)),
			hint: "publish on " + wire.InTenantPrefix + "<tenant>.response with a tenant of 1-64 letters, digits, '-' or '_'"}
		return s
	case a.Identity != nil && wire.TenantToken(s.req.Tenant) != tok:
		s.err = &senderRefusal{code: CodeTenantNotGranted, lane: lane, why: fmt.Sprintf("the token's tenant %s is not the subject's (%s)", shortValue(orNone(s.req.Tenant), 64), tok),
			hint: "publish on the subjects of the token's tenant, " + wire.InTenantResponse(s.req.Tenant)}
		return s
	case a.Identity != nil:
		return s
	case lane == "":
		s.err = &senderRefusal{code: CodeTenantNotGranted, why: fmt.Sprintf("subject token %q names no tenant toolgate can tell without an issuer", tok),
			hint: "publish on the subjects of a tenant of 1-64 letters, digits, '-' or '_'"}
		return s
	case s.req.Tenant != "" && s.req.Tenant != lane:
		s.err = &senderRefusal{code: CodeTenantNotGranted, lane: lane, why: fmt.Sprintf("header %s names tenant %s on the subject of tenant %s", wire.HeaderTenant, shortValue(s.req.Tenant, 64), lane),
			hint: "leave the header out, or send it with the subject's tenant"}
		return s
	}
	s.req.Tenant = lane
	s.binding = strings.Join([]string{"unverified", lane, s.req.Principal, strings.Join(s.withheld, ",")}, "\x00")
	return s
}

// laneTenant is the tenant a tenant token stands for, "" when the token is
// a digest (wire.TenantToken of a tenant that is not a plain token), which
// names no tenant by itself.
func laneTenant(tok string) string {
	if tok == "" || tok[0] == '~' || wire.TenantToken(tok) != tok {
		return ""
	}
	return tok
}

// validTenantToken reports whether tok is what wire.TenantToken makes: a
// plain tenant, or "~" and 32 hex digits.
func validTenantToken(tok string) bool {
	if laneTenant(tok) != "" {
		return true
	}
	if len(tok) != 33 || tok[0] != '~' {
		return false
	}
	_, err := hex.DecodeString(tok[1:])
	return err == nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// CodeTenantNotGranted refuses a message whose tenant is not its sender's:
// a Toolgate-Tenant header on a shared subject without an issuer, or a
// tenant (header or token) other than that of the tenant subject it came
// on. Nothing of it runs.
const CodeTenantNotGranted = "tenant_not_granted"

const tokenHint = "send a valid token of the issuer in header " + wire.HeaderToken

// senderRefusal is why a sender was refused: the code its response ends with,
// the tenant whose results hear of it (the subject's, which only that
// tenant's producer may publish on; "" otherwise) and what to do.
type senderRefusal struct {
	code, lane, why, hint string
}

func (r *senderRefusal) Error() string { return r.why }

// refusalOf is err as a refusal: a bare error is an identity refused by
// the issuer.
func refusalOf(err error) *senderRefusal {
	if r, ok := err.(*senderRefusal); ok {
		return r
	}
	return &senderRefusal{code: CodeIdentityInvalid, why: err.Error(), hint: tokenHint}
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
// claimed roles are recorded in the call's history (withheld). Who may
// name a tenant is the subject's to say (senderOn).
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
