package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolgate/toolgate/internal/testenv"
)

// letterOf reloads the dead-letter page until a letter of call id is
// listed and returns its sequence.
func letterOf(t *testing.T, tab context.Context, u *up, id string) string {
	t.Helper()
	var seq string
	untilPage(t, tab, u.console("dlq"), func() error {
		seq = js[string](t, tab, fmt.Sprintf(`(() => { const r = [...document.querySelectorAll("tr[data-seq]")].find(r => r.innerText.includes(%q)); return r ? r.dataset.seq : "" })()`, id))
		if seq == "" {
			return fmt.Errorf("no dead letter of %s listed:\n%s", id, bodyText(tab))
		}
		return nil
	})
	return seq
}

func TestDLQ_schema_invalid_letter_replayed_from_the_page_after_the_fix_executes_once(t *testing.T) {
	u := startUp(t, upOptions{})
	tab := u.operatorTab(t)
	id := u.publish(t, "e2e-yen", "schema-invalid-invoice.json")
	seq := letterOf(t, tab, u, id)
	if f := text(t, tab, fmt.Sprintf("tr[data-seq=%q]", seq)); !strings.Contains(f, "schema_invalid") {
		t.Errorf("the letter's row %q does not say schema_invalid", f)
	}
	shot(t, tab, "dlq")

	visit(t, tab, u.console("dlq/"+seq), "[data-testid=evidence]")
	if ev := text(t, tab, "[data-testid=evidence]"); !strings.Contains(ev, "YEN") || !strings.Contains(ev, "currency") {
		t.Errorf("the evidence %q does not show the YEN currency and its error", ev)
	}
	shot(t, tab, "letter")

	out := u.mustCLI(t, "tools", "apply", "-f", filepath.Join("internal", "console", "e2e", "testdata", "create_invoice-yen.yaml"))
	if !strings.Contains(out, "create_invoice changed") {
		t.Fatalf("tools apply did not change create_invoice:\n%s", out)
	}
	// Each stage follows the tools bucket on its own watch: the fix has
	// reached the validate gate once a fresh copy of the letter's call
	// executes (one probe runs; those before it fail as the letter did).
	probes := 0
	testenv.Eventually(t, 60*time.Second, 200*time.Millisecond, func() error {
		probes++
		pid := u.publish(t, fmt.Sprintf("e2e-yen-probe-%d", probes), "schema-invalid-invoice.json")
		var st string
		testenv.Eventually(t, 30*time.Second, 100*time.Millisecond, func() error {
			st, _ = u.cli(t, "status", pid)
			if !strings.Contains(st, "status    executed") && !strings.Contains(st, "status    failed") {
				return fmt.Errorf("probe %s not ended yet:\n%s", pid, st)
			}
			return nil
		})
		if !strings.Contains(st, "status    executed") {
			return fmt.Errorf("probe %s met the old schema:\n%s", pid, st)
		}
		return nil
	})
	untilPage(t, tab, u.console("tools"), func() error {
		if r := text(t, tab, `tr[data-tool="create_invoice"]`); !strings.Contains(r, "create_invoice") {
			return fmt.Errorf("tools page row of create_invoice: %q\n%s", r, bodyText(tab))
		}
		return nil
	})
	shot(t, tab, "tools")
	visit(t, tab, u.console("tools/create_invoice"), "[data-testid=revisions]")
	if n := count(t, tab, "[data-testid=revisions] li"); n < 2 {
		t.Errorf("the tool's history lists %d revisions, want the example's and the fix:\n%s", n, text(t, tab, "[data-testid=revisions]"))
	}
	shot(t, tab, "tool")

	visit(t, tab, u.console("dlq"), fmt.Sprintf("input[type=checkbox][name=seq][value=%q]", seq))
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(fmt.Sprintf("input[type=checkbox][name=seq][value=%q]", seq)))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS("form#dlq-replay button[data-action=replay-selected]"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, "[data-testid=replay-progress], [data-testid=replay-summary]")
	summary := awaitSummary(t, tab)
	if !strings.Contains(summary, "NOW EXECUTED") {
		t.Fatalf("the replay summary %q is not the CLI's", summary)
	}
	if n := text(t, tab, "[data-testid=replay-summary] [data-testid=sum-executed]"); n != "1" {
		t.Fatalf("the replay summary counts %q now executed, want 1:\n%s", n, summary)
	}
	shot(t, tab, "replayed")

	untilPage(t, tab, u.console("calls/"+id), func() error {
		if s := text(t, tab, "[data-testid=call-status]"); s != "executed" {
			return fmt.Errorf("replayed call status %q", s)
		}
		return nil
	})
	shot(t, tab, "call")
	if n := u.executionsAtLeast(t, "create_invoice", 2) - 1; n != 1 { // less the probe that ran
		t.Fatalf("the replayed letter executed %d times", n)
	}
	// Settled letters are listed with "settled too" (all=1).
	visit(t, tab, u.console("dlq?all=1"), fmt.Sprintf("tr[data-seq=%q] [data-testid=fate]", seq))
	if f := text(t, tab, fmt.Sprintf("tr[data-seq=%q] [data-testid=fate]", seq)); !strings.Contains(f, "executed") {
		t.Errorf("the replayed letter's fate is %q, want it to say executed", f)
	}
	shot(t, tab, "dlq-after")
}

// awaitSummary waits for the replay's final summary, live or on reload.
func awaitSummary(t *testing.T, tab context.Context) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("[data-testid=replay-summary]"))); err != nil {
		t.Fatalf("no replay summary on %s: %v\n%s", location(tab), err, bodyText(tab))
	}
	return text(t, tab, "[data-testid=replay-summary]")
}
