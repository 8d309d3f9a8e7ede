package e2e

import (
	"fmt"
	"strings"
	"testing"
)

func TestAccess_post_without_csrf_token_is_refused(t *testing.T) {
	u := startUp(t, upOptions{})
	tab := u.operatorTab(t)
	id := u.publish(t, "e2e-csrf", "delete-account.json", asAdmin...)
	awaitApproval(t, tab, u, id)
	shot(t, tab, "approvals")
	form := row(id, "form[data-action=approve]")
	hash := js[string](t, tab, fmt.Sprintf("document.querySelector(%q).value", form+" input[name=hash]"))
	csrf := js[string](t, tab, fmt.Sprintf("document.querySelector(%q).value", form+" input[name=csrf]"))

	p := fetchPost(t, tab, "/console/approvals/"+id+"/approve", map[string]string{"hash": hash, "reason": "no token"})
	if p.Status != 403 || !strings.Contains(p.Body, "csrf") {
		t.Fatalf("an approval without the CSRF token answered %d %q, want 403 naming csrf", p.Status, p.Body)
	}
	p = fetchPost(t, tab, "/console/approvals/"+id+"/approve", map[string]string{"hash": hash, "reason": "wrong token", "csrf": strings.Repeat("0", len(csrf))})
	if p.Status != 403 || !strings.Contains(p.Body, "csrf") {
		t.Fatalf("an approval with a wrong CSRF token answered %d %q, want 403 naming csrf", p.Status, p.Body)
	}
	awaitApproval(t, tab, u, id)
	if n := u.executions("delete_customer_account"); n != 0 {
		t.Fatalf("a request without CSRF token executed %d times", n)
	}

	// The same request with the page's token is accepted: the refusal
	// above was the token's.
	p = fetchPost(t, tab, "/console/approvals/"+id+"/approve", map[string]string{"hash": hash, "reason": "with the token", "csrf": csrf})
	if p.Status != 200 {
		t.Fatalf("the approval with the page's CSRF token answered %d %q", p.Status, p.Body)
	}
	untilPage(t, tab, u.console("calls/"+id), func() error {
		if s := text(t, tab, "[data-testid=call-status]"); s != "executed" {
			return fmt.Errorf("call status %q", s)
		}
		return nil
	})
	shot(t, tab, "call")
	if n := u.executionsAtLeast(t, "delete_customer_account", 1); n != 1 {
		t.Fatalf("executed %d times", n)
	}
}
