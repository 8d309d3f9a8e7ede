package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolgate/toolgate/internal/testenv"
)

// whatIfInvoice lets only the finance role create invoices.
const whatIfInvoice = `tools:
  - name: create_invoice
    input_schema: {type: object}
    policy: {risk: write, allow: "'finance' in roles"}
`

// TestWhatIf_a_viewer_pastes_a_definition_and_follows_a_call_to_its_story:
// an invoice executes; a viewer pastes a definition that lets only finance
// create invoices into the tools page's what-if form, sees the executed call
// that would now be refused, and follows it to its story. Nothing changes:
// the live create_invoice still executes.
func TestWhatIf_a_viewer_pastes_a_definition_and_follows_a_call_to_its_story(t *testing.T) {
	u := startUp(t, upOptions{Tokens: "viewer vera " + viewerToken + "\n"})
	id := u.publish(t, "e2e-whatif", "valid-invoice.json")
	testenv.Eventually(t, 60*time.Second, 200*time.Millisecond, func() error {
		if got := u.executions("create_invoice"); got != 1 {
			return fmt.Errorf("create_invoice executed %d times", got)
		}
		return nil
	})
	viewer := newTab(t)
	login(t, viewer, u, viewerToken, false)
	sel := fmt.Sprintf("[data-testid=changes-create_invoice] a[href='/console/calls/%s']", id)
	// The call's audit event is written as it ends: run until it is read.
	testenv.Eventually(t, 30*time.Second, 500*time.Millisecond, func() error {
		visit(t, viewer, u.console("tools"), "[data-testid=whatif-form] textarea")
		if err := chromedp.Do(viewer, chromedp.SetValue(chromedp.CSS("[data-testid=whatif-form] textarea[name=definition]"), whatIfInvoice)); err != nil {
			return err
		}
		if _, err := chromedp.RunResponse(viewer, chromedp.Click(chromedp.CSS("[data-testid=whatif-form] button[type=submit]"))); err != nil {
			return err
		}
		waitFor(t, viewer, "[data-testid=whatif-form]")
		if count(t, viewer, sel) == 0 {
			return fmt.Errorf("no change shown for %s yet:\n%s", id, bodyText(viewer))
		}
		return nil
	})
	if body := text(t, viewer, "[data-testid=changes-create_invoice]"); !strings.Contains(body, "would be rejected: policy_rejected") {
		t.Fatalf("the what-if shows:\n%s", body)
	}
	if n := text(t, viewer, "[data-testid=refused]"); !strings.Contains(n, "1 call(s)") {
		t.Errorf("refused line %q", n)
	}
	shot(t, viewer, "whatif-as-viewer")
	if _, err := chromedp.RunResponse(viewer, chromedp.Click(chromedp.CSS(sel))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, viewer, "body")
	if loc := location(viewer); !strings.HasSuffix(loc, "/console/calls/"+id) || !strings.Contains(bodyText(viewer), id) {
		t.Fatalf("the example leads to %s:\n%s", loc, bodyText(viewer))
	}
	// Nothing was applied: the live definition still runs the next invoice.
	u.publish(t, "e2e-whatif-after", "valid-invoice.json")
	testenv.Eventually(t, 60*time.Second, 200*time.Millisecond, func() error {
		if got := u.executions("create_invoice"); got != 2 {
			return fmt.Errorf("create_invoice executed %d times, want 2", got)
		}
		return nil
	})
}
