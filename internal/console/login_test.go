package console

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/approval"
)

// anonymous is a client of r's console with no session, that does not
// follow redirects.
func anonymous(r *rig) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Issue 28: "any local process is the operator". Without credentials
// nothing is shown and nothing decided: every page sends to the login,
// every POST — with the hash and even with the login form's CSRF token,
// the one token an anonymous client can get — is refused, and the waiting
// call stays waiting.
func TestAuth_without_credentials_nothing_is_shown_or_decided(t *testing.T) {
	r := newRig(t, nil, nil)
	rec := r.waiting("ranon-0", "delete_customer_account", `{"customer_id":"c1"}`)
	seq := r.deadLetter("ranond-0", "create_invoice", `{"amount":0}`)
	c := anonymous(r)
	for _, path := range []string{Prefix, Prefix + "calls", Prefix + "calls/ranon-0", Prefix + "approvals", Prefix + "dlq", Prefix + "dlq/" + itoa(seq), Prefix + "tools"} {
		resp, err := c.Get(r.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != Prefix+"login" {
			t.Errorf("GET %s without a session: %d %s, want a redirect to the login", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if resp, err := c.Get(r.ts.URL + Prefix + "events?topic=overview"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("events without a session: %v %v, want 401", resp, err)
	}
	loginCSRF := r.srv.auth.loginCSRF()
	for path, form := range map[string]url.Values{
		Prefix + "approvals/ranon-0/approve": {"hash": {rec.ArgsHash}, "csrf": {loginCSRF}, "reason": {"anon"}},
		Prefix + "approvals/ranon-0/deny":    {"hash": {rec.ArgsHash}, "csrf": {loginCSRF}},
		Prefix + "dlq/replay":                {"seq": {itoa(seq)}, "mode": {"selected"}, "csrf": {loginCSRF}},
		Prefix + "dlq/purge/confirm":         {"seq": {itoa(seq)}, "mode": {"selected"}, "all": {"1"}, "csrf": {loginCSRF}},
	} {
		resp, err := c.PostForm(r.ts.URL+path, form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST %s without a session: %d, want 401", path, resp.StatusCode)
		}
	}
	if got := r.approvalRecord("ranon-0"); got.State != approval.Pending {
		t.Fatalf("an anonymous post decided: %+v", got)
	}
	if _, body := r.get(Prefix + "dlq"); !strings.Contains(body, `data-seq="`+itoa(seq)+`"`) {
		t.Fatal("an anonymous purge removed the letter")
	}
}

func TestLogin_cookie_is_httponly_strict_and_holds_no_token(t *testing.T) {
	r := newRig(t, map[string]Role{rigToken: Operator}, nil)
	c := anonymous(r)
	resp, err := c.PostForm(r.ts.URL+Prefix+"login", url.Values{"token": {rigToken}, "csrf": {r.srv.auth.loginCSRF()}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var got *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == CookieName {
			got = ck
		}
	}
	if got == nil || !got.HttpOnly || got.SameSite != http.SameSiteStrictMode || got.Path != Prefix || strings.Contains(got.Value, rigToken) {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, path %s, no token in it", got, Prefix)
	}
	if got.Secure {
		t.Fatal("Secure on a console served over plain HTTP: the browser would never send it back")
	}
}

func TestLogin_cookie_is_secure_over_tls(t *testing.T) {
	r := newRig(t, map[string]Role{rigToken: Operator}, nil)
	req, _ := http.NewRequest(http.MethodPost, "https://console.test"+Prefix+"login", strings.NewReader(url.Values{"token": {rigToken}, "csrf": {r.srv.auth.loginCSRF()}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = "192.0.2.1:1234"
	req.TLS = tlsState()
	w := newRecorder()
	r.srv.Handler().ServeHTTP(w, req)
	if ck := w.Result().Cookies(); len(ck) != 1 || !ck[0].Secure || !ck[0].HttpOnly {
		t.Fatalf("cookies over TLS %+v, want one Secure HttpOnly session cookie", ck)
	}
}

func TestLogout_ends_the_session_even_for_a_copy_of_the_cookie(t *testing.T) {
	r := newRig(t, nil, nil)
	u, _ := url.Parse(r.ts.URL + Prefix)
	var copied string
	for _, ck := range r.c.Jar.Cookies(u) {
		if ck.Name == CookieName {
			copied = ck.Value
		}
	}
	if copied == "" {
		t.Fatal("no session cookie after login")
	}
	code, body := r.post(Prefix+"logout", url.Values{"csrf": {r.csrf(Prefix + "approvals")}})
	if code != 200 || !strings.Contains(body, `<form id="login"`) {
		t.Fatalf("logout: %d\n%s", code, body)
	}
	c := anonymous(r)
	req, _ := http.NewRequest(http.MethodGet, r.ts.URL+Prefix+"approvals", nil)
	req.AddCookie(&http.Cookie{Name: CookieName, Value: copied})
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the cookie of a logged-out session: %d, want a redirect to the login", resp.StatusCode)
	}
}

func TestLogin_failures_are_limited_per_address_and_logged_without_the_token(t *testing.T) {
	r := newRig(t, map[string]Role{rigToken: Operator}, nil)
	var log strings.Builder
	r.srv.cfg.Log = zerolog.New(&log)
	now := time.Now()
	r.srv.cfg.Now = func() time.Time { return now }
	c := anonymous(r)
	try := func(tok string) *http.Response {
		t.Helper()
		resp, err := c.PostForm(r.ts.URL+Prefix+"login", url.Values{"token": {tok}, "csrf": {r.srv.auth.loginCSRF()}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	wrong := "guess-0123456789-abcdef"
	for i := range loginBurst {
		if resp := try(wrong); resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "failed") {
			t.Fatalf("failure %d: %d %s, want the login again", i+1, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	resp := try(rigToken)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("after %d failures, the right token: %d, want 429 with Retry-After (unchecked)", loginBurst, resp.StatusCode)
	}
	now = now.Add(loginEvery)
	if resp := try(rigToken); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != Prefix {
		t.Fatalf("a while later, the right token: %d %s, want logged in", resp.StatusCode, resp.Header.Get("Location"))
	}
	out := log.String()
	if strings.Count(out, "login refused: unknown token") != loginBurst || strings.Count(out, "too many failed logins") != 1 {
		t.Fatalf("want each failure and the limit logged once:\n%s", out)
	}
	if strings.Contains(out, wrong) || strings.Contains(out, rigToken) {
		t.Fatalf("a token reached the log:\n%s", out)
	}
}

func TestEnsureTokenFile_makes_one_operator_once_and_keeps_it(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secrets")
	path, err := EnsureTokenFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	roles, names, err := LoadTokens(path)
	if err != nil || len(roles) != 1 {
		t.Fatalf("tokens %v, %v: want one", roles, err)
	}
	for tok, role := range roles {
		if role != Operator || names[tok] != FirstOperator || len(tok) < 32 {
			t.Fatalf("%s %s (%d characters), want operator %s with a long random token", role, names[tok], len(tok), FirstOperator)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v: want 0600", st.Mode().Perm(), err)
	}
	before, _ := os.ReadFile(path)
	added := append(before, []byte("viewer vic 0123456789abcdef0123\n")...)
	if err := os.WriteFile(path, added, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureTokenFile(dir); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(added) {
		t.Fatalf("a second start changed the file:\n%s", after)
	}
}
