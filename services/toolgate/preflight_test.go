package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Before, make test on a machine without chromium ran for minutes and
// failed in internal/console/e2e with "no chromium on PATH". Now its
// preflight names every missing program with the command that installs it
// and stops before any test runs.
func TestPreflight_names_each_missing_program_with_its_install_commands(t *testing.T) {
	empty := t.TempDir()
	cmd := exec.Command("./scripts/preflight.sh")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "PREFLIGHT_PATH="+empty)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("preflight with nothing on PATH exited 0:\n%s", out)
	}
	text := string(out)
	for _, want := range []string{
		"missing go redis-server redis-cli chromium node npm prometheus; no test was run",
		"Debian/Ubuntu: sudo apt-get install -y golang-go redis-server chromium nodejs npm prometheus",
		"macOS:         brew install go redis node prometheus && brew install --cask chromium",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("preflight output lacks %q:\n%s", want, text)
		}
	}

	// Only what is missing is named: with every program but chromium, it
	// asks for chromium alone.
	some := t.TempDir()
	for _, name := range []string{"go", "redis-server", "redis-cli", "node", "npm", "prometheus"} {
		if err := os.WriteFile(filepath.Join(some, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd = exec.Command("./scripts/preflight.sh")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "PREFLIGHT_PATH="+some)
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "missing chromium;") || !strings.Contains(string(out), "apt-get install -y chromium\n") {
		t.Errorf("preflight without chromium: err %v, output:\n%s", err, out)
	}

	// And on this machine, which has them all, it passes silently.
	cmd = exec.Command("./scripts/preflight.sh")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
		t.Errorf("preflight on the test machine: err %v, output %q", err, out)
	}
}
