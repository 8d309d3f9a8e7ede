package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestRig_browser_reaches_a_running_up: the harness itself — the browser
// loads up's readiness page over HTTP, and the example executor serves.
func TestRig_browser_reaches_a_running_up(t *testing.T) {
	u := startUp(t, upOptions{})
	tab := newTab(t)
	if err := chromedp.Do(tab, chromedp.Navigate("http://"+u.http+"/readyz")); err != nil {
		t.Fatal(err)
	}
	if body := bodyText(tab); !strings.Contains(strings.ToLower(body), "ready") && !strings.Contains(body, "ok") {
		t.Fatalf("readyz in the browser shows %q", body)
	}
	if !strings.Contains(u.executor.String(), "executor: serving") {
		t.Fatalf("executor output %q", u.executor.String())
	}
}
