package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/toolgate/toolgate/internal/console"
)

func TestApproval_approved_from_the_page_executes_once_and_its_timeline_shows_every_gate(t *testing.T) {
	u := startUp(t, upOptions{})
	tab := u.operatorTab(t)
	visit(t, tab, u.console(""), "[data-testid=overview]")
	for _, st := range gates {
		if count(t, tab, fmt.Sprintf("[data-testid=overview] [data-stage=%s]", st)) == 0 {
			t.Errorf("the overview has no stage %s", st)
		}
	}
	shot(t, tab, "overview")

	id := u.publish(t, "e2e-approve", "delete-account.json", asAdmin...)
	awaitApproval(t, tab, u, id)
	if args := text(t, tab, row(id, "[data-testid=args]")); !strings.Contains(args, "cus_9821") || !strings.Contains(args, "customer asked to close the account") {
		t.Errorf("the approver is not shown the arguments in full: %q", args)
	}
	if h := text(t, tab, row(id, "[data-testid=args-hash]")); h == "" {
		t.Error("no arguments hash shown")
	}
	if text(t, tab, row(id, "[data-testid=expires]")) == "" {
		t.Error("no expiry shown")
	}
	shot(t, tab, "approvals")
	if n := u.executions("delete_customer_account"); n != 0 {
		t.Fatalf("executed %d times before anyone approved", n)
	}

	form := row(id, "form[data-action=approve]")
	again := map[string]string{"reason": "twice", "hash": js[string](t, tab, fmt.Sprintf("document.querySelector(%q).value", form+" input[name=hash]")),
		"csrf": js[string](t, tab, fmt.Sprintf("document.querySelector(%q).value", form+" input[name=csrf]"))}
	submit(t, tab, id, "approve", "confirmed with the customer by phone")
	if cls := js[string](t, tab, `document.querySelector("[data-testid=flash]").className`); !strings.Contains(cls, "ok") {
		t.Fatalf("approving shows a flash of class %q: %s", cls, text(t, tab, "[data-testid=flash]"))
	}
	shot(t, tab, "approved")

	untilPage(t, tab, u.console("calls/"+id), func() error {
		if s := text(t, tab, "[data-testid=call-status]"); s != "executed" {
			return fmt.Errorf("call status %q", s)
		}
		return nil
	})
	for _, st := range gates {
		if count(t, tab, fmt.Sprintf("[data-testid=timeline] [data-stage=%s]", st)) == 0 {
			t.Errorf("the timeline has no step of gate %s:\n%s", st, text(t, tab, "[data-testid=timeline]"))
		}
	}
	// The decision is on the timeline with who made it and why.
	if d := text(t, tab, "[data-testid=timeline] [data-stage=policy][data-status=approved]"); !strings.Contains(d, console.FirstOperator) || !strings.Contains(d, "confirmed with the customer by phone") {
		t.Errorf("the timeline's approval step %q does not name who approved and the reason", d)
	}
	if r := text(t, tab, "[data-testid=result]"); !strings.Contains(r, "deleted") {
		t.Errorf("the call page's result is %q, not the executor's", r)
	}
	shot(t, tab, "call")
	if n := u.executionsAtLeast(t, "delete_customer_account", 1); n != 1 {
		t.Fatalf("approved once, executed %d times", n)
	}
	// The same form submitted again (a double click, a reload that posts
	// again) decides nothing: the call has executed.
	if p := fetchPost(t, tab, "/console/approvals/"+id+"/approve", again); !strings.Contains(p.Body, `class="flash error"`) {
		t.Fatalf("a second approval of an executed call was not refused: %d\n%s", p.Status, p.Body)
	}
	visit(t, tab, u.console("calls/"+id), "[data-testid=call-status]")
	if s := text(t, tab, "[data-testid=call-status]"); s != "executed" || u.executions("delete_customer_account") != 1 {
		t.Fatalf("after a second approval the call is %q, executed %d times", s, u.executions("delete_customer_account"))
	}

	// The calls search finds it, and its link leads to the call page.
	visit(t, tab, u.console("calls"), "form#call-search")
	if err := chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS("form#call-search input[name=response]"), "e2e-approve")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.RunResponse(tab, chromedp.Submit(chromedp.CSS("form#call-search input[name=response]"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, fmt.Sprintf(`tr[data-call-id=%q] a[data-testid=call-link]`, id))
	shot(t, tab, "calls")
	if _, err := chromedp.RunResponse(tab, chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-call-id=%q] a[data-testid=call-link]`, id)))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tab, "[data-testid=call-status]")
	if loc := location(tab); !strings.HasSuffix(loc, "/console/calls/"+id) {
		t.Errorf("the call link leads to %s", loc)
	}
}

func TestApproval_refused_when_the_arguments_differ_from_those_shown(t *testing.T) {
	u := startUp(t, upOptions{})
	tab := u.operatorTab(t)
	id := u.publish(t, "e2e-changed", "delete-account.json", asAdmin...)
	awaitApproval(t, tab, u, id)

	// The page showed one hash; the decision arrives bound to another, as
	// when the arguments behind the call are not the ones shown.
	hashInput := row(id, "form[data-action=approve] input[name=hash]")
	shown := js[string](t, tab, fmt.Sprintf("document.querySelector(%q).value", hashInput))
	sum := sha256.Sum256([]byte(`{"customer_id":"cus_0001","reason":"someone else"}`))
	other := hex.EncodeToString(sum[:])
	forged := js[string](t, tab, fmt.Sprintf(`(() => { const i = document.querySelector(%q); const v = i.value.replace(/[0-9a-f]{64}$/, %q); i.value = v; return v })()`, hashInput, other))
	if forged == shown {
		t.Fatalf("the hidden hash %q holds no sha256 to change", shown)
	}
	submit(t, tab, id, "approve", "looks fine")
	flash := text(t, tab, "[data-testid=flash]")
	if cls := js[string](t, tab, `document.querySelector("[data-testid=flash]").className`); !strings.Contains(cls, "error") || !strings.Contains(flash, "arguments changed") {
		t.Fatalf("an approval bound to other arguments shows %q (class %q), want a refusal saying the arguments changed", flash, cls)
	}
	shot(t, tab, "refused")

	// Still waiting, nothing ran.
	awaitApproval(t, tab, u, id)
	visit(t, tab, u.console("calls/"+id), "[data-testid=call-status]")
	if s := text(t, tab, "[data-testid=call-status]"); s != "approval_required" {
		t.Errorf("after the refusal the call is %q, want approval_required", s)
	}
	shot(t, tab, "call")
	if n := u.executions("delete_customer_account"); n != 0 {
		t.Fatalf("a refused approval executed %d times", n)
	}
}
