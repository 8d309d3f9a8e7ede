package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// gates are the stages every executed call passes, in order.
var gates = []string{"accumulate", "parse", "validate", "business", "policy", "execute"}

// row is the approvals queue's row of call id, and a selector inside it.
func row(id, inner string) string {
	return fmt.Sprintf(`tr[data-call-id=%q] %s`, id, inner)
}

// awaitApproval reloads the approvals queue until call id is in it.
func awaitApproval(t *testing.T, tab context.Context, u *up, id string) {
	t.Helper()
	untilPage(t, tab, u.console("approvals"), func() error {
		if count(t, tab, fmt.Sprintf(`tr[data-call-id=%q]`, id)) != 1 {
			return fmt.Errorf("call %s not in the approvals queue:\n%s", id, bodyText(tab))
		}
		return nil
	})
}

// submit fills the reason of the row's form (approve or deny), submits
// it and waits for the page it leads to.
func submit(t *testing.T, tab context.Context, id, action, reason string) {
	t.Helper()
	form := row(id, fmt.Sprintf("form[data-action=%s]", action))
	if err := chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS(form+" input[name=reason]"), reason)); err != nil {
		t.Fatalf("fill the reason of %s: %v", form, err)
	}
	if _, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(form+" button[type=submit]"))); err != nil {
		t.Fatalf("submit %s: %v", form, err)
	}
	waitFor(t, tab, "[data-testid=flash]")
}
