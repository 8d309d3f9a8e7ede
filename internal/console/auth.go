package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CookieName is the session cookie.
const CookieName = "tg_console"

// sessionTTL is how long a login lasts.
const sessionTTL = 12 * time.Hour

// user is who makes a request.
type user struct {
	Name string
	Role Role
	CSRF string
}

// auth checks tokens and sessions. A session cookie holds no token: it
// names the token by a hash, with an expiry, signed with a key derived from
// every token, so replicas reading one token file accept each other's
// sessions and changing the file ends every session. There is no console
// without tokens: loopback is not an identity (issue 28).
type auth struct {
	key  []byte
	byID map[string]user // token hash → user (CSRF unset)
	// digests maps sha256 of each token to its id: a login compares
	// digests, so the time it takes says nothing of a token's content or
	// length.
	digests map[[32]byte]string
	// revoked holds the nonces of sessions logged out, until they expire:
	// a copied cookie stops working at logout (in this process).
	mu      sync.Mutex
	revoked map[string]int64
}

func newAuth(tokens map[string]Role, names map[string]string) *auth {
	a := &auth{byID: map[string]user{}, digests: map[[32]byte]string{}, revoked: map[string]int64{}}
	keys := make([]string, 0, len(tokens))
	for t := range tokens {
		keys = append(keys, t)
	}
	sort.Strings(keys)
	h := sha256.New()
	h.Write([]byte("toolgate-console-session\x00"))
	for _, t := range keys {
		h.Write([]byte(t + "\x00"))
		name := names[t]
		if name == "" {
			name = string(tokens[t])
		}
		id := tokenID(t)
		a.byID[id] = user{Name: name, Role: tokens[t]}
		a.digests[sha256.Sum256([]byte(t))] = id
	}
	a.key = h.Sum(nil)
	return a
}

func tokenID(tok string) string {
	s := sha256.Sum256([]byte("toolgate-console-token\x00" + tok))
	return hex.EncodeToString(s[:12])
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on a supported system
	}
	return b
}

func (a *auth) mac(parts ...string) string {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte(strings.Join(parts, "|")))
	return hex.EncodeToString(m.Sum(nil))
}

// login checks a token and returns the session cookie's value. Every
// token's digest is compared, whichever matches.
func (a *auth) login(tok string, now time.Time) (string, bool) {
	d := sha256.Sum256([]byte(tok))
	var id string
	for td, tid := range a.digests {
		if subtle.ConstantTimeCompare(td[:], d[:]) == 1 {
			id = tid
		}
	}
	if id == "" {
		return "", false
	}
	exp := strconv.FormatInt(now.Add(sessionTTL).Unix(), 10)
	nonce := hex.EncodeToString(randomBytes(12))
	return id + "." + exp + "." + nonce + "." + a.mac("session", id, exp, nonce), true
}

// session returns the user of a session cookie's value.
func (a *auth) session(v string, now time.Time) (user, bool) {
	p := strings.Split(v, ".")
	if len(p) != 4 {
		return user{}, false
	}
	if !hmac.Equal([]byte(p[3]), []byte(a.mac("session", p[0], p[1], p[2]))) {
		return user{}, false
	}
	exp, err := strconv.ParseInt(p[1], 10, 64)
	if err != nil || now.Unix() > exp {
		return user{}, false
	}
	u, ok := a.byID[p[0]]
	if !ok {
		return user{}, false
	}
	a.mu.Lock()
	_, gone := a.revoked[p[2]]
	a.mu.Unlock()
	if gone {
		return user{}, false
	}
	u.CSRF = a.mac("csrf", p[2])
	return u, true
}

// revoke ends the session of a cookie's value (logout) until it would
// have expired anyway; expired revocations are dropped on the way.
func (a *auth) revoke(v string, now time.Time) {
	p := strings.Split(v, ".")
	if len(p) != 4 {
		return
	}
	exp, err := strconv.ParseInt(p[1], 10, 64)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for n, e := range a.revoked {
		if now.Unix() > e {
			delete(a.revoked, n)
		}
	}
	a.revoked[p[2]] = exp
}

// who is the user making r; false: not logged in.
func (a *auth) who(r *http.Request, now time.Time) (user, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return user{}, false
	}
	return a.session(c.Value, now)
}

// loginCSRF is the CSRF token of the login form.
func (a *auth) loginCSRF() string { return a.mac("csrf", "login") }

type userKey struct{}

func userOf(r *http.Request) user {
	u, _ := r.Context().Value(userKey{}).(user)
	return u
}

// route registers h for pattern, for users whose role is at least need. A
// POST must carry the user's CSRF token (form field csrf or header
// X-CSRF-Token) and come from this origin.
func (s *Server) route(mux *http.ServeMux, pattern string, need Role, h http.HandlerFunc) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		u, ok := s.auth.who(r, s.cfg.Now())
		if !ok {
			if r.Method == http.MethodGet && r.URL.Path != Prefix+"events" {
				http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
				return
			}
			http.Error(w, "not logged in: log in at "+Prefix+"login", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			if !s.checkCSRF(w, r, u.CSRF) {
				return
			}
		}
		if !u.Role.Can(need) {
			s.cfg.Log.Warn().Str("user", u.Name).Str("role", string(u.Role)).Str("path", r.URL.Path).Msg("console: refused: role")
			http.Error(w, "forbidden: this needs the "+string(need)+" role; you are "+string(u.Role), http.StatusForbidden)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
	})
}

// checkCSRF refuses a POST without the right token, or from another site.
func (s *Server) checkCSRF(w http.ResponseWriter, r *http.Request, want string) bool {
	if !sameOrigin(r) {
		http.Error(w, "forbidden: csrf: the request comes from another origin", http.StatusForbidden)
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	if got == "" || !hmac.Equal([]byte(got), []byte(want)) {
		http.Error(w, "forbidden: csrf token missing or wrong: reload the page and try again", http.StatusForbidden)
		return false
	}
	return true
}

// sameOrigin reports whether a browser's Origin (or Sec-Fetch-Site) says
// the request comes from the console's own origin; a request without them
// (curl) passes to the token check.
//
// A browser's own word comes first: Chromium sends `Origin: null` on a
// form submission from a page under a strict Referrer-Policy, with
// `Sec-Fetch-Site: same-origin` (a header no page can set) beside it.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return false
	case "same-origin":
		return true
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}
