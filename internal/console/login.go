package console

import (
	"net"
	"net/http"
)

// loginPage is the login form.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "login", "Log in", map[string]any{"CSRF": s.auth.loginCSRF(), "Failed": r.URL.Query().Get("failed") != "", "TokenFile": TokenFile})
}

// login checks the form's token. A client address that failed too often
// is refused without its token being checked (429, Retry-After); every
// refusal is logged with the address, never with the token.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !s.checkCSRF(w, r, s.auth.loginCSRF()) {
		return
	}
	now := s.cfg.Now()
	client := clientAddr(r)
	if wait, ok := s.limit.take(client, now); !ok {
		if s.limit.firstRefusal(client) {
			s.cfg.Log.Warn().Str("remote", client).Msg("console: login refused: too many failed logins from this address; refused unchecked until it slows down")
		}
		w.Header().Set("Retry-After", itoa(uint64(wait.Seconds())+1))
		http.Error(w, "too many failed logins from your address: try again in a minute", http.StatusTooManyRequests)
		return
	}
	v, ok := s.auth.login(r.PostFormValue("token"), now)
	if !ok {
		s.cfg.Log.Warn().Str("remote", client).Msg("console: login refused: unknown token")
		http.Redirect(w, r, Prefix+"login?failed=1", http.StatusSeeOther)
		return
	}
	s.limit.refund(client, now)
	u, _ := s.auth.session(v, now)
	s.cfg.Log.Info().Str("user", u.Name).Str("role", string(u.Role)).Str("remote", client).Msg("console: logged in")
	http.SetCookie(w, s.cookie(r, v, int(sessionTTL.Seconds())))
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

// logout ends the session: the cookie is cleared and its value refused
// from now on, should a copy of it be used.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	u, ok := s.auth.who(r, s.cfg.Now())
	if ok {
		if !s.checkCSRF(w, r, u.CSRF) {
			return
		}
		c, _ := r.Cookie(CookieName)
		s.auth.revoke(c.Value, s.cfg.Now())
		s.cfg.Log.Info().Str("user", u.Name).Msg("console: logged out")
	}
	http.SetCookie(w, s.cookie(r, "", -1))
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}

// cookie is the session cookie: never readable by scripts, never sent by
// another site's request, and over TLS only when served over TLS.
func (s *Server) cookie(r *http.Request, v string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: v, Path: Prefix, HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: maxAge}
}

// clientAddr is the address a request comes from (its connection's,
// never a header a client chooses).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
