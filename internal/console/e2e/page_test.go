package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolgate/toolgate/internal/testenv"
)

// shotsDir is where the screenshots go: TOOLGATE_E2E_SHOTS, else
// screenshots/ beside these tests (git-ignored), which outlives the test.
func shotsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TOOLGATE_E2E_SHOTS")
	if dir == "" {
		abs, err := filepath.Abs("screenshots")
		if err != nil {
			t.Fatal(err)
		}
		dir = abs
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// shot saves a full-page screenshot of the tab as <test>-<name>.png and
// logs its path.
func shot(t *testing.T, tab context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(shotsDir(t), unsafeName.ReplaceAllString(t.Name()+"-"+name, "_")+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s: %s", name, path)
}

// visit loads url and waits for sel; a failed load or an absent hook fails
// the test with the page's text.
func visit(t *testing.T, tab context.Context, url, sel string) {
	t.Helper()
	resp, err := chromedp.Run(tab, chromedp.NavigateResponse(url))
	if err != nil {
		t.Fatalf("load %s: %v", url, err)
	}
	if resp != nil && resp.Status >= 400 {
		t.Fatalf("load %s: HTTP %d\n%s", url, resp.Status, bodyText(tab))
	}
	waitFor(t, tab, sel)
}

// waitFor waits a bounded time for sel in the current document.
func waitFor(t *testing.T, tab context.Context, sel string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(sel))); err != nil {
		t.Fatalf("page %s has no %s: %v\n%s", location(tab), sel, err, bodyText(tab))
	}
}

// untilPage reloads url until check passes on it (the console renders on
// the server; a status that changes shows on the next load).
func untilPage(t *testing.T, tab context.Context, url string, check func() error) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, 200*time.Millisecond, func() error {
		if err := chromedp.Do(tab, chromedp.Navigate(url)); err != nil {
			return err
		}
		return check()
	})
}

// js evaluates expr in the page and returns its value.
func js[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// count is the number of elements sel matches now.
func count(t *testing.T, tab context.Context, sel string) int {
	t.Helper()
	return js[int](t, tab, fmt.Sprintf("document.querySelectorAll(%q).length", sel))
}

// text is the text of the first element sel matches now, "" if none.
func text(t *testing.T, tab context.Context, sel string) string {
	t.Helper()
	return strings.TrimSpace(js[string](t, tab, fmt.Sprintf("(document.querySelector(%q) || {innerText: ''}).innerText", sel)))
}

func bodyText(tab context.Context) string {
	s, _ := chromedp.Run(tab, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
	if len(s) > 2000 {
		s = s[:2000] + "…"
	}
	return s
}

func location(tab context.Context) string {
	s, _ := chromedp.Run(tab, chromedp.Location())
	return s
}
