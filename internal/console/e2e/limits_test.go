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

// oneInvoice allows one invoice an hour.
const oneInvoice = `
tools:
  - name: create_invoice
    input_schema: {type: object}
    policy: {risk: write}
    limits:
      - {name: one_invoice, window: 1h, count: 1}
`

// TestLimits_a_viewer_sees_the_limit_and_which_limit_rejected_a_call: an
// operator applies a limit of one invoice an hour with the CLI; invoices
// are published until one ends limit_exceeded. A viewer's Limits page
// shows the limit with what it charged and rejected, and the rejected
// call's story names the limit, linked to that page.
func TestLimits_a_viewer_sees_the_limit_and_which_limit_rejected_a_call(t *testing.T) {
	u := startUp(t, upOptions{Tokens: "viewer vera " + viewerToken + "\n"})
	anon := newTab(t)
	visit(t, anon, u.console("limits"), "form#login") // sent to log in
	file := filepath.Join(t.TempDir(), "limit.yaml")
	if err := os.WriteFile(file, []byte(oneInvoice), 0o600); err != nil {
		t.Fatal(err)
	}
	u.mustCLI(t, "tools", "apply", "-f", file)
	viewer := newTab(t)
	login(t, viewer, u, viewerToken, false)
	n, rejected := 0, ""
	testenv.Eventually(t, 60*time.Second, 500*time.Millisecond, func() error {
		n++ // the execute stage sees the limit a moment after it is stored
		id := u.publish(t, fmt.Sprintf("e2e-limit-%d", n), "valid-invoice.json")
		// publish does not wait: the call is shown once accumulate has
		// taken it (before, the console answers 404), and it ends a moment
		// later
		untilPage(t, viewer, u.console("calls/"+id), func() error {
			if st := text(t, viewer, "[data-testid=call-status]"); st != "executed" && st != "limit_exceeded" {
				return fmt.Errorf("call %s: %q, not ended yet", id, st)
			}
			return nil
		})
		if count(t, viewer, "[data-testid=call-limit]") == 0 {
			return fmt.Errorf("call %s names no limit (%s)", id, text(t, viewer, "[data-testid=call-status]"))
		}
		rejected = id
		return nil
	})
	if got := text(t, viewer, "[data-testid=call-limit]"); !strings.Contains(got, "rejected by one_invoice") {
		t.Fatalf("story of %s says %q", rejected, got)
	}
	if st := text(t, viewer, "[data-testid=call-status]"); st != "limit_exceeded" {
		t.Fatalf("call %s is %s", rejected, st)
	}
	shot(t, viewer, "call-rejected-by-a-limit")
	visit(t, viewer, u.console("limits"), "[data-testid=limits]")
	row := text(t, viewer, "#limit-one_invoice")
	for _, want := range []string{"one_invoice", "1 call", "1h", "tenant", "reject", "create_invoice"} {
		if !strings.Contains(row, want) {
			t.Fatalf("limits row %q lacks %q", row, want)
		}
	}
	if got := text(t, viewer, "#limit-one_invoice [data-testid=rejected]"); got == "0" {
		t.Fatalf("limits page counts no rejection: %q", row)
	}
	shot(t, viewer, "limits-as-viewer")
}
