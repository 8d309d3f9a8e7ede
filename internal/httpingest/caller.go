package httpingest

import (
	"net/http"

	"github.com/toolgate/toolgate/pkg/wire"
)

// caller is who sent a request: its tenant and, where identity is
// verified, its token.
type caller struct {
	tenant string
	token  string
}

// who verifies r's Toolgate-Token where the service has an identity
// issuer, answering 401 itself when it is missing or invalid; without one
// the tenant is Toolgate-Tenant, taken on trust as NATS ingest does.
func (s *Server) who(w http.ResponseWriter, r *http.Request) (caller, bool) {
	tok := r.Header.Get(wire.HeaderToken)
	if s.cfg.Verifier == nil {
		return caller{tenant: r.Header.Get(wire.HeaderTenant), token: tok}, true
	}
	id, err := s.cfg.Verifier.Verify(r.Context(), tok)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate", error="invalid_token"`)
		fail(w, http.StatusUnauthorized, CodeUnauthorized, err.Error())
		return caller{}, false
	}
	return caller{tenant: id.Tenant, token: tok}, true
}
