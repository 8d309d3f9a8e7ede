package httpingest

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/pkg/wire"
)

// caller is who sent a request: the tenant it acts for (one its
// credential allows), the issuer's token to carry on (Toolgate-Token), and
// the principal its credential fixes, if any.
type caller struct {
	tenant    string
	token     string
	principal string
	name      string // the credential's name or "token", for logs
}

// who authenticates r, answering 401 (WWW-Authenticate: Bearer) or 403
// itself when it may not act. A request authenticates with a producer's
// bearer token (Authorization: Bearer, a Credential) or, where the service
// has an identity issuer, with that issuer's JWT (Toolgate-Token, or as
// the bearer token). A credential acts for the tenants it allows:
// Toolgate-Tenant must name one of them (it may be left out when there is
// only one); a JWT acts for its own tenant, whatever Toolgate-Tenant says.
// Nothing reaches the ingest without one or the other.
func (s *Server) who(w http.ResponseWriter, r *http.Request) (caller, bool) {
	bearer, presented := bearerOf(r.Header)
	jwt := r.Header.Get(wire.HeaderToken)
	cred, isCred := s.keys.find(bearer)
	if bearer == "" {
		isCred = false
	}
	if !isCred && bearer != "" && s.cfg.Verifier != nil && jwt == "" {
		jwt = bearer // Authorization: Bearer <the issuer's JWT>
	}
	switch {
	case s.cfg.Verifier != nil && jwt != "":
		id, err := s.cfg.Verifier.Verify(r.Context(), jwt)
		if err != nil {
			s.unauthorized(w, true, err.Error())
			return caller{}, false
		}
		if isCred && !cred.allows(id.Tenant) {
			s.forbidden(w, fmt.Sprintf("the bearer token may not act for the Toolgate-Token's tenant %s", clip(id.Tenant)))
			return caller{}, false
		}
		return caller{tenant: id.Tenant, token: jwt, principal: cred.Principal, name: "token"}, true
	case isCred:
		tenant, named := r.Header.Get(wire.HeaderTenant), r.Header.Values(wire.HeaderTenant) != nil
		if !named && len(cred.Tenants) == 1 {
			tenant = cred.Tenants[0]
		}
		if !cred.allows(tenant) {
			s.forbidden(w, fmt.Sprintf("%s %s: this credential may not act for that tenant", wire.HeaderTenant, clip(tenant)))
			return caller{}, false
		}
		if p := r.Header.Get(wire.HeaderPrincipal); cred.Principal != "" && p != "" && p != cred.Principal {
			s.forbidden(w, fmt.Sprintf("%s %s: this credential is for another principal", wire.HeaderPrincipal, clip(p)))
			return caller{}, false
		}
		return caller{tenant: tenant, token: jwt, principal: cred.Principal, name: cred.Name}, true
	case presented:
		s.unauthorized(w, true, "the bearer token is not one this ingest knows")
	default:
		s.unauthorized(w, false, "no credential")
	}
	return caller{}, false
}

// bearerOf is the token of an "Authorization: Bearer <token>" header, and
// whether any Authorization was sent.
func bearerOf(h http.Header) (string, bool) {
	v := h.Get("Authorization")
	scheme, tok, _ := strings.Cut(strings.TrimSpace(v), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", v != ""
	}
	return strings.TrimSpace(tok), true
}

// unauthorized answers 401 with the challenge of RFC 6750, saying how to
// authenticate; invalid when a credential was sent and refused. No token
// is quoted back or logged.
func (s *Server) unauthorized(w http.ResponseWriter, invalid bool, why string) {
	ch := `Bearer realm="toolgate"`
	if invalid {
		ch += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", ch)
	how := "send Authorization: Bearer <token>, a producer's token (toolgate up keeps it in its secrets directory, " + TokenFile("producer") + " or " + TokenFile("producer-<tenant>") + ")"
	if s.cfg.Verifier != nil {
		how += ", or Toolgate-Token: <the identity issuer's JWT>"
	}
	fail(w, http.StatusUnauthorized, CodeUnauthorized, why+": "+how)
}

func (s *Server) forbidden(w http.ResponseWriter, why string) {
	fail(w, http.StatusForbidden, CodeForbidden, why)
}
