package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

// shadowInvoice lets only the finance role create invoices.
const shadowInvoice = `
tools:
  - name: create_invoice
    input_schema: {type: object}
    policy: {risk: write, allow: "'finance' in roles"}
`

// TestShadow_a_viewer_sees_what_the_shadow_would_refuse: an operator
// applies a shadow with the CLI; a viewer's Shadow page shows the invoice
// that executed and would now be refused, while it executed once.
func TestShadow_a_viewer_sees_what_the_shadow_would_refuse(t *testing.T) {
	u := startUp(t, upOptions{Tokens: "viewer vera " + viewerToken + "\n"})
	anon := newTab(t)
	visit(t, anon, u.console("shadow"), "form#login") // sent to log in
	file := filepath.Join(t.TempDir(), "shadow.yaml")
	if err := os.WriteFile(file, []byte(shadowInvoice), 0o600); err != nil {
		t.Fatal(err)
	}
	u.mustCLI(t, "tools", "apply", "--shadow", "-f", file)
	viewer := newTab(t)
	login(t, viewer, u, viewerToken, false)
	n := 0
	testenv.Eventually(t, 60*time.Second, 500*time.Millisecond, func() error {
		n++ // the policy stage arms the shadow a moment after it is stored
		u.publish(t, fmt.Sprintf("e2e-shadow-%d", n), "valid-invoice.json")
		visit(t, viewer, u.console("shadow"), "[data-testid=shadow]")
		if count(t, viewer, "[data-testid=changes-create_invoice]") == 0 {
			return fmt.Errorf("no changes shown yet")
		}
		return nil
	})
	body := text(t, viewer, "[data-testid=changes-create_invoice]")
	if !strings.Contains(body, "would be rejected: policy_rejected") || !strings.Contains(body, "'finance' in roles") {
		t.Fatalf("shadow page shows:\n%s", body)
	}
	shot(t, viewer, "shadow-as-viewer")
	testenv.Eventually(t, 30*time.Second, 100*time.Millisecond, func() error {
		if got := u.executions("create_invoice"); got != n {
			return fmt.Errorf("create_invoice executed %d times for %d calls", got, n)
		}
		return nil
	})
}
