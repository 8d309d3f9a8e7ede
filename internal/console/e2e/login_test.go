package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Issue 28, "any local process is the operator": plain toolgate up served
// its console to anybody on loopback as the operator "local". Now a
// browser without a session is sent to the login form, and a POST from it
// is refused; the first operator logs in through the form with the token
// up wrote, approves through the page, and a forged POST of that logged-in
// page without the CSRF token is refused; logout ends the session.
func TestAccess_first_operator_logs_in_with_the_token_up_wrote_and_csrf_guards_the_approval(t *testing.T) {
	u := startUp(t, upOptions{})
	id := u.publish(t, "e2e-login", "delete-account.json", asAdmin...)

	anon := newTab(t)
	visit(t, anon, u.console("approvals"), "form#login")
	if loc := location(anon); !strings.HasSuffix(loc, "/console/login") {
		t.Fatalf("without a session the approvals page ended at %s, want the login", loc)
	}
	shot(t, anon, "anonymous")
	// The only CSRF token an anonymous page can read is the login form's.
	csrf := js[string](t, anon, `document.querySelector("form#login input[name=csrf]").value`)
	p := fetchPost(t, anon, "/console/approvals/"+id+"/approve", map[string]string{"csrf": csrf, "hash": strings.Repeat("0", 64), "reason": "anonymous"})
	if p.Status != 401 {
		t.Fatalf("an approval without a session answered %d %q, want 401", p.Status, p.Body)
	}
	// A wrong token: the form again, saying so.
	if err := chromedp.Do(anon, chromedp.SendKeys(chromedp.CSS("form#login input[name=token]"), "not-the-token-0123456789")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.RunResponse(anon, chromedp.Click(chromedp.CSS("form#login button[type=submit]"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, anon, "[data-testid=flash]")
	if f := text(t, anon, "[data-testid=flash]"); !strings.Contains(f, "not valid") {
		t.Fatalf("a wrong token shows %q", f)
	}

	tab := newTab(t)
	login(t, tab, u, u.token, true)
	if who := text(t, tab, "[data-testid=who]"); !strings.Contains(who, "operator") {
		t.Fatalf("logged in as %q, want the first operator", who)
	}
	awaitApproval(t, tab, u, id)
	form := row(id, "form[data-action=approve]")
	hash := js[string](t, tab, fmt.Sprintf("document.querySelector(%q).value", form+" input[name=hash]"))

	// A forged POST from the logged-in page: its session cookie goes with
	// it, the CSRF token does not.
	p = fetchPost(t, tab, "/console/approvals/"+id+"/approve", map[string]string{"hash": hash, "reason": "forged"})
	if p.Status != 403 || !strings.Contains(p.Body, "csrf") {
		t.Fatalf("a POST without the CSRF token answered %d %q, want 403 naming csrf", p.Status, p.Body)
	}
	awaitApproval(t, tab, u, id)
	if n := u.executions("delete_customer_account"); n != 0 {
		t.Fatalf("refused requests executed the call %d times", n)
	}

	submit(t, tab, id, "approve", "the operator checked it")
	if cls := js[string](t, tab, `document.querySelector("[data-testid=flash]").className`); !strings.Contains(cls, "ok") {
		t.Fatalf("approving shows a flash of class %q: %s", cls, text(t, tab, "[data-testid=flash]"))
	}
	untilPage(t, tab, u.console("calls/"+id), func() error {
		if s := text(t, tab, "[data-testid=call-status]"); s != "executed" {
			return fmt.Errorf("call status %q", s)
		}
		return nil
	})
	if n := u.executionsAtLeast(t, "delete_customer_account", 1); n != 1 {
		t.Fatalf("approved once, executed %d times", n)
	}

	// Logout ends the session: the next page is the login again.
	if _, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS("form.logout button[type=submit]"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, "form#login")
	visit(t, tab, u.console("approvals"), "form#login")
	shot(t, tab, "logged-out")
}
