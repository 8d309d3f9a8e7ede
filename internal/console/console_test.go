package console

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

func TestPages_every_route_renders_its_hooks(t *testing.T) {
	r := newRig(t, nil, nil)
	r.waiting("rwait-0", "delete_customer_account", `{"customer_id":"c1","password":"p4ss"}`)
	seq := r.deadLetter("rdead-0", "create_invoice", `{"amount":0}`)
	r.tool(`{"name":"create_invoice","input_schema":{"type":"object"},"policy":{"risk":"write"}}`)
	r.tool(`{"name":"create_invoice","input_schema":{"type":"object"},"policy":{"risk":"irreversible"}}`)
	for _, c := range []struct{ path, want string }{
		{Prefix, `data-testid="overview"`},
		{Prefix, `data-stage="parse"`},
		{Prefix, `data-testid="outcome-unknown"`},
		{Prefix + "calls", `form id="call-search"`},
		{Prefix + "calls?tool=create_invoice", `data-call-id="rdead-0"`},
		{Prefix + "calls/rdead-0", `data-testid="timeline"`},
		{Prefix + "calls/rdead-0", `data-stage="validate" data-status="schema_invalid"`},
		{Prefix + "calls/rdead-0", `data-testid="repair"`},
		{Prefix + "calls/rwait-0", `data-testid="parsed-args"`},
		{Prefix + "approvals", `data-call-id="rwait-0"`},
		{Prefix + "approvals", `data-action="approve"`},
		{Prefix + "dlq", `data-seq="` + itoa(seq) + `"`},
		{Prefix + "dlq", `form id="dlq-replay"`},
		{Prefix + "dlq/" + itoa(seq), `data-testid="evidence"`},
		{Prefix + "tools", `data-tool="create_invoice"`},
		{Prefix + "tools/create_invoice", `data-revision="2"`},
		{Prefix + "tools/create_invoice", `data-revision="1"`},
		{Prefix + "tools/create_invoice", `changed <span data-testid="changed">policy</span>`},
		{Prefix + "static/console.js", `EventSource`},
	} {
		code, body := r.get(c.path)
		if code != 200 || !strings.Contains(body, c.want) {
			t.Errorf("GET %s: %d, want 200 with %s; got\n%s", c.path, code, c.want, body)
		}
	}
}

func TestCallPage_redacts_raw_arguments_as_the_audit_does(t *testing.T) {
	r := newRig(t, nil, nil)
	r.deadLetter("rsec-0", "create_invoice", `{"amount":0,"password":"hunter2"}`)
	_, body := r.get(Prefix + "calls/rsec-0")
	if strings.Contains(body, "hunter2") {
		t.Fatalf("a secret reached the call page:\n%s", body)
	}
	if !strings.Contains(body, "[REDACTED]") {
		t.Fatalf("want the redaction mark on the call page:\n%s", body)
	}
	if !strings.Contains(body, `data-testid="error-path">amount<`) {
		t.Fatalf("want the error's JSON path shown:\n%s", body)
	}
}

func TestHeaders_every_answer_is_not_cached_framed_or_scripted_inline(t *testing.T) {
	r := newRig(t, nil, nil)
	resp, err := r.c.Get(r.ts.URL + Prefix)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for k, want := range map[string]string{"X-Frame-Options": "DENY", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if c := resp.Header.Get("Content-Security-Policy"); !strings.Contains(c, "script-src 'self'") || strings.Contains(c, "unsafe-inline") {
		t.Errorf("CSP %q", c)
	}
}

func TestAuth_tokens_login_and_roles(t *testing.T) {
	viewer, approver := "viewer-token-0123456789", "approver-token-0123456789"
	r := newRig(t, map[string]Role{viewer: Viewer, approver: Approver}, map[string]string{viewer: "vera", approver: "alex"})
	rec := r.waiting("rrole-0", "delete_customer_account", `{"customer_id":"c1","api_token":"sk-live-secret"}`)

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(r.ts.URL + Prefix + "approvals")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != Prefix+"login" {
		t.Fatalf("without a session: %d %s, want a redirect to the login", resp.StatusCode, resp.Header.Get("Location"))
	}
	if code, body := r.post(Prefix+"login", url.Values{"token": {"wrong-token-0123456789"}, "csrf": {r.csrf(Prefix + "login")}}); code != 200 || !strings.Contains(body, "not valid") {
		t.Fatalf("a wrong token: %d %s", code, body)
	}

	r.login(viewer)
	_, body := r.get(Prefix + "approvals")
	if !strings.Contains(body, `data-call-id="rrole-0"`) || strings.Contains(body, `data-action="approve"`) {
		t.Fatalf("a viewer sees the queue without decision forms:\n%s", body)
	}
	if strings.Contains(body, "sk-live-secret") || !strings.Contains(body, "[REDACTED]") {
		t.Fatalf("a viewer sees the arguments redacted:\n%s", body)
	}
	csrf := r.csrf(Prefix + "approvals") // the logout form's
	code, _ := r.post(Prefix+"approvals/rrole-0/approve", url.Values{"csrf": {csrf}, "hash": {rec.ArgsHash}})
	if code != http.StatusForbidden {
		t.Fatalf("a viewer approving: %d, want 403", code)
	}

	r.c.Jar, _ = newJar()
	r.login(approver)
	if _, body := r.get(Prefix + "approvals"); !strings.Contains(body, "sk-live-secret") {
		t.Fatalf("an approver sees the arguments in full:\n%s", body)
	}
	code, body = r.post(Prefix+"approvals/rrole-0/approve", url.Values{"csrf": {r.csrf(Prefix + "approvals")}, "hash": {rec.ArgsHash}, "reason": {"checked"}})
	if code != 200 || !strings.Contains(body, `data-testid="flash" class="flash ok"`) {
		t.Fatalf("an approver approving: %d\n%s", code, body)
	}
	got := r.approvalRecord("rrole-0")
	if got.State != approval.Approved || got.By != "alex" || got.Reason != "checked" {
		t.Fatalf("record %+v, want approved by alex (the token's name)", got)
	}
}

func TestCSRF_a_post_without_the_token_is_refused(t *testing.T) {
	r := newRig(t, nil, nil)
	rec := r.waiting("rcsrf-0", "delete_customer_account", `{"customer_id":"c1"}`)
	code, body := r.post(Prefix+"approvals/rcsrf-0/approve", url.Values{"hash": {rec.ArgsHash}})
	if code != http.StatusForbidden || !strings.Contains(body, "csrf") {
		t.Fatalf("no csrf: %d %s, want 403 naming csrf", code, body)
	}
	code, _ = r.post(Prefix+"approvals/rcsrf-0/approve", url.Values{"hash": {rec.ArgsHash}, "csrf": {"00ff"}})
	if code != http.StatusForbidden {
		t.Fatalf("a wrong csrf token: %d, want 403", code)
	}
	req, _ := http.NewRequest(http.MethodPost, r.ts.URL+Prefix+"approvals/rcsrf-0/approve", strings.NewReader(url.Values{"hash": {rec.ArgsHash}, "csrf": {r.csrf(Prefix + "approvals")}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	resp, err := r.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("another origin with the right token: %d, want 403", resp.StatusCode)
	}
	if got := r.approvalRecord("rcsrf-0"); got.State != approval.Pending {
		t.Fatalf("a refused post decided: %+v", got)
	}
}

func TestApprove_bound_to_the_hash_shown(t *testing.T) {
	r := newRig(t, nil, nil)
	r.waiting("rhash-0", "delete_customer_account", `{"customer_id":"c1"}`)
	csrf := r.csrf(Prefix + "approvals")
	other := approval.ArgsHash([]byte(`{"customer_id":"c2"}`))
	code, body := r.post(Prefix+"approvals/rhash-0/approve", url.Values{"csrf": {csrf}, "hash": {other}})
	if code != http.StatusConflict || !strings.Contains(body, "arguments changed") || !strings.Contains(body, `class="flash error"`) {
		t.Fatalf("another hash: %d\n%s", code, body)
	}
	if got := r.approvalRecord("rhash-0"); got.State != approval.Pending {
		t.Fatalf("refused, yet decided: %+v", got)
	}
	code, _ = r.post(Prefix+"approvals/rhash-0/deny", url.Values{"csrf": {csrf}, "hash": {approval.ArgsHash([]byte(`{"customer_id":"c1"}`))}, "reason": {"no"}})
	if got := r.approvalRecord("rhash-0"); code != 200 || got.State != approval.Denied || got.By != rigName {
		t.Fatalf("deny with the hash shown: %d %+v", code, got)
	}
	// Resumed: the decided envelope went back to the policy gate.
	st, err := r.js.Stream(context.Background(), streams.StreamGates)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if _, err := st.GetLastMsgForSubject(context.Background(), streams.Gate(streams.Policy)); err != nil {
			return err
		}
		return nil
	})
}

func TestNew_without_tokens_refuses_on_any_address(t *testing.T) {
	r := newRig(t, nil, nil)
	if _, err := New(Config{JS: r.js, Log: zerolog.Nop()}); err == nil || !strings.Contains(err.Error(), "tokens") || !strings.Contains(err.Error(), TokenFile) {
		t.Fatalf("err = %v, want one naming tokens and %s", err, TokenFile)
	}
	if _, err := New(Config{JS: r.js, Tokens: map[string]Role{"short": Operator}}); err == nil {
		t.Fatal("a short token accepted")
	}
}

func TestEvents_overview_streams_live_numbers(t *testing.T) {
	r := newRig(t, nil, nil)
	r.deadLetter("rsse-0", "create_invoice", `{"amount":0}`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.ts.URL+Prefix+"events?topic=overview", nil)
	resp, err := r.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	events := 0
	for sc.Scan() && events < 2 {
		line := sc.Text()
		if strings.HasPrefix(line, "data: ") {
			if !strings.Contains(line, `"k":"dead-total","t":"1"`) || !strings.Contains(line, `"k":"stage.parse.pending"`) {
				t.Fatalf("event %s", line)
			}
			events++
		}
	}
	if events < 2 {
		t.Fatalf("got %d events, want a first and a later one (%v)", events, sc.Err())
	}
}

func TestDLQ_replay_shows_progress_then_the_cli_summary(t *testing.T) {
	r := newRig(t, nil, nil)
	seq := r.deadLetter("rrep-0", "create_invoice", `{"amount":0}`)
	code, body := r.post(Prefix+"dlq/replay", url.Values{"csrf": {r.csrf(Prefix + "dlq")}, "seq": {itoa(seq)}, "mode": {"selected"}})
	if code != 200 || !strings.Contains(body, `data-testid="replay-progress"`) {
		t.Fatalf("replay: %d\n%s", code, body)
	}
	testenv.Eventually(t, 20*time.Second, 50*time.Millisecond, func() error {
		_, body = r.get(strings.TrimPrefix(lastURL(t, r, body), r.ts.URL))
		if !strings.Contains(body, `data-testid="replay-summary"`) {
			return errNot("summary")
		}
		return nil
	})
	if !strings.Contains(body, "NOW EXECUTED") || !strings.Contains(body, `data-testid="sum-selected">1<`) {
		t.Fatalf("summary:\n%s", body)
	}
}

func TestDLQ_purge_asks_first_then_deletes(t *testing.T) {
	r := newRig(t, nil, nil)
	seq := r.deadLetter("rpurge-0", "create_invoice", `{"amount":0}`)
	csrf := r.csrf(Prefix + "dlq")
	code, body := r.post(Prefix+"dlq/purge", url.Values{"csrf": {csrf}, "seq": {itoa(seq)}, "mode": {"selected"}})
	if code != 200 || !strings.Contains(body, `data-action="confirm-purge"`) {
		t.Fatalf("purge: %d\n%s", code, body)
	}
	if _, body := r.get(Prefix + "dlq"); !strings.Contains(body, `data-seq="`+itoa(seq)+`"`) {
		t.Fatal("the letter went before the purge was confirmed")
	}
	code, body = r.post(Prefix+"dlq/purge/confirm", url.Values{"csrf": {csrf}, "seq": {itoa(seq)}, "mode": {"selected"}, "all": {"1"}})
	if code != 200 || !strings.Contains(body, "purged 1 dead letter") || strings.Contains(body, `data-seq="`+itoa(seq)+`"`) {
		t.Fatalf("confirm: %d\n%s", code, body)
	}
}

// Issue 29: `approve` after an expiry said only "already expired". The
// console says the call expired before a decision, that nothing runs, and
// where its dead letter and story are.
func TestApprove_after_expiry_says_what_became_of_the_call(t *testing.T) {
	r := newRig(t, nil, nil)
	rec := r.waiting("rlate-0", "delete_customer_account", `{"customer_id":"c1"}`)
	csrf := r.csrf(Prefix + "approvals")
	r.srv.cfg.Now = func() time.Time { return rec.ExpiresAt.Add(time.Minute) }
	code, body := r.post(Prefix+"approvals/rlate-0/approve", url.Values{"csrf": {csrf}, "hash": {rec.ArgsHash}})
	for _, want := range []string{"expired at", "approval_expired", "nothing runs", "toolgate dlq ls --call rlate-0", Prefix + "calls/rlate-0"} {
		if code != http.StatusConflict || !strings.Contains(body, want) {
			t.Fatalf("approve after the expiry: %d, want 409 saying %q:\n%s", code, want, body)
		}
	}
	if got := r.approvalRecord("rlate-0"); got.State != approval.Pending {
		t.Fatalf("a late approval decided: %+v", got)
	}
}
