package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

const (
	viewerToken   = "view-only-0123456789abcdef"
	approverToken = "may-approve-0123456789abcdef"
)

// login logs in through the form with token and waits for the overview.
func login(t *testing.T, tab context.Context, u *up, token string, screenshot bool) {
	t.Helper()
	visit(t, tab, u.console("login"), "form#login")
	if screenshot {
		shot(t, tab, "login")
	}
	if err := chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS("form#login input[name=token]"), token)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS("form#login button[type=submit]"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, "[data-testid=overview]")
	if loc := location(tab); strings.Contains(loc, token) {
		t.Fatalf("the token is in the URL %s", loc)
	}
}

func TestAccess_viewer_sees_no_approve_form_and_a_forged_approval_is_forbidden(t *testing.T) {
	u := startUp(t, upOptions{Tokens: "viewer vera " + viewerToken + "\napprover alan " + approverToken + "\n"})
	id := u.publish(t, "e2e-viewer", "delete-account.json", asAdmin...)

	anon := newTab(t)
	visit(t, anon, u.console("approvals"), "form#login") // sent to log in
	viewer := newTab(t)
	login(t, viewer, u, viewerToken, true)
	awaitApproval(t, viewer, u, id)
	if n := count(t, viewer, "form[data-action=approve], form[data-action=deny]"); n != 0 {
		t.Fatalf("a viewer is shown %d approve/deny forms", n)
	}
	shot(t, viewer, "approvals-as-viewer")

	// A forged approval with the viewer's own CSRF token (the logout form
	// holds it): refused for the role, not for CSRF.
	csrf := js[string](t, viewer, `(document.querySelector("input[name=csrf]") || {value: ""}).value`)
	if csrf == "" {
		t.Fatal("the viewer's page holds no CSRF token (logout form) to forge a complete request with")
	}
	hash := text(t, viewer, row(id, "[data-testid=args-hash]"))
	p := fetchPost(t, viewer, "/console/approvals/"+id+"/approve", map[string]string{"csrf": csrf, "hash": hash, "reason": "forged"})
	if p.Status != 403 || strings.Contains(strings.ToLower(p.Body), "csrf") {
		t.Fatalf("a viewer's approval with a valid CSRF token answered %d %q, want 403 for the role", p.Status, p.Body)
	}

	// An approver, for contrast, is shown the forms.
	approver := newTab(t)
	login(t, approver, u, approverToken, false)
	awaitApproval(t, approver, u, id)
	if n := count(t, approver, row(id, "form[data-action=approve]")); n != 1 {
		t.Fatalf("an approver is shown %d approve forms", n)
	}
	shot(t, approver, "approvals-as-approver")
	awaitApproval(t, viewer, u, id) // still pending
	if n := u.executions("delete_customer_account"); n != 0 {
		t.Fatalf("a viewer's forged approval executed %d times", n)
	}
}
