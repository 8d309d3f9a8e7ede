package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolgate/toolgate/internal/authz"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

// The README's five-minute tour, run as written: its shell blocks, in one
// shell from the repository root, against a toolgate up as make run starts
// it (the example tools applied, producers allowed to assert their roles)
// with the example executor serving, and the environment make run prints.
// Each step must show what the README says it shows: the valid call
// executed once, the cut call truncated and its dead letter replayed, the
// irreversible call approved by hash and then executed.
func TestTour_runs_as_written(t *testing.T) {
	blocks := pageSection(t, "README.md", "## A five-minute tour")
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for _, b := range blocks {
		if b.lang != "sh" {
			t.Fatalf("the tour has a %q block: every block of it is a shell step the test runs", b.lang)
		}
		script.WriteString(b.text)
	}
	if len(blocks) != 3 {
		t.Fatalf("the tour has %d shell blocks, want 3 (publish, a dead letter, an approval): update this test with the page", len(blocks))
	}

	u := clitest.StartUp(t, "--identity-assert-users", authz.Producer)
	bin := filepath.Dir(clitest.UpBinary(t))
	exe := filepath.Join(t.TempDir(), "executor")
	if out, err := exec.Command("go", "build", "-o", exe, "../../examples/executor").CombinedOutput(); err != nil {
		t.Fatalf("build the example executor: %v\n%s", err, out)
	}
	env := append(os.Environ(), "TOOLGATE_NATS_URL="+u.URL, "NATS_URL="+u.URL, "TOOLGATE_SECRETS="+u.Secrets,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ex := exec.Command(exe)
	ex.Env = env
	ex.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var exOut strings.Builder
	ex.Stdout, ex.Stderr = &exOut, &exOut
	if err := ex.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-ex.Process.Pid, syscall.SIGTERM); _ = ex.Wait() })

	sh := exec.Command("bash", "-c", script.String())
	sh.Dir, sh.Env = "../..", env
	out, err := sh.CombinedOutput()
	text := string(out)
	if err != nil {
		t.Fatalf("the tour failed: %v\n%s\nexecutor:\n%s", err, text, exOut.String())
	}
	t.Logf("the tour printed:\n%s", text)
	for _, want := range []string{
		"create_invoice   executed",         // the valid invoice ran
		"failed (truncated)",                // the cut call ended truncated, never completed
		"REPLAYED",                          // its dead letter was replayed
		"FAILED AGAIN",                      // and the replay says how it ended
		"state      pending",                // the irreversible call waited for a human
		"approved: delete_customer_account", // the decision, bound to the hash shown
		"delete_customer_account  executed", // and then it ran
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the tour's output lacks %q", want)
		}
	}
	if n := strings.Count(exOut.String(), "delete_customer_account"); n < 1 {
		t.Errorf("the approved call never reached the executor:\n%s", exOut.String())
	}
}
