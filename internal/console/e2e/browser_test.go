package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser is the one headless Chromium of this test binary; every test
// opens its tabs in a browser context of its own (cookies, storage).
var browser struct {
	ctx context.Context // nil when it did not start
	err error           // why not
}

func TestMain(m *testing.M) {
	os.Exit(runWithBrowser(m))
}

// runWithBrowser starts the browser, runs the tests and kills the browser
// (the allocator's cancel waits for the process), whatever they did.
func runWithBrowser(m *testing.M) int {
	stop := startBrowser()
	defer stop()
	defer cleanBinaries()
	return m.Run()
}

// browserPath finds Debian's chromium, or another Chrome the machine has.
func browserPath() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH: the console's browser tests need Debian's chromium package (apt-get install chromium), as .ci/run installs it")
}

// startBrowser starts a headless Chromium in a temporary profile. Its
// failure is kept in browser.err for each test to report.
func startBrowser() func() {
	path, err := browserPath()
	if err != nil {
		browser.err = err
		return func() {}
	}
	dir, err := os.MkdirTemp("", "toolgate-e2e-chromium-")
	if err != nil {
		browser.err = err
		return func() {}
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.Headless, chromedp.DisableGPU,
		chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 900))
	if os.Geteuid() == 0 {
		// Chromium refuses to run as root with its sandbox.
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	stop := func() {
		cancelCtx()
		cancelAlloc()
		for range 50 { // its children may still write the profile a moment
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	start, cancelStart := context.WithTimeout(ctx, 60*time.Second)
	defer cancelStart()
	// The first Do binds the browser's life to ctx, not to start's timeout.
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(ctx) }()
	select {
	case err = <-done:
	case <-start.Done():
		err = start.Err()
	}
	if err != nil {
		browser.err = fmt.Errorf("start %s: %w", path, err)
		return stop
	}
	browser.ctx = ctx
	return stop
}

// newTab opens a tab in a fresh browser context (no cookies of another
// test), closed at the test's end; every action in it is bounded.
func newTab(t *testing.T) context.Context {
	t.Helper()
	if browser.ctx == nil {
		t.Fatalf("no browser: %v", browser.err)
	}
	bounded, cancelBound := context.WithTimeout(browser.ctx, 3*time.Minute)
	tab, cancelTab := chromedp.NewContext(bounded, chromedp.WithNewBrowserContext())
	t.Cleanup(func() { cancelTab(); cancelBound() })
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return tab
}
