package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

// Before, make run printed every failed call twice (the server's warning
// and publish's outcome, both on the terminal) and every executed one
// twice (the executor's line and publish's result). Now the terminal shows
// each outcome once; the server's and the executor's logs are files.
func TestRunScript_prints_each_outcome_once_and_logs_to_files(t *testing.T) {
	bin := filepath.Dir(clitest.UpBinary(t))
	build := exec.Command("go", "build", "-o", bin+string(os.PathSeparator), "./examples/executor")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build executor: %v\n%s", err, out)
	}
	dir := t.TempDir()
	cmd := exec.Command("./scripts/run.sh")
	cmd.Dir = "../.."
	listen := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cmd.Env = append(os.Environ(), "RUN_ONCE=1", "BIN="+bin, "RUN_INGEST_HTTP=",
		"RUN_LISTEN="+listen, fmt.Sprintf("RUN_HTTP=127.0.0.1:%d", testenv.FreePort(t)),
		"RUN_DATA="+filepath.Join(dir, "data"), "RUN_LOGS="+dir, "TOOLGATE_SECRETS="+filepath.Join(dir, "secrets"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("scripts/run.sh: %v\n%s", err, out.String())
	}
	text := out.String()
	m := regexp.MustCompile(`demo-valid-(\d+)-0`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no demo-valid call in:\n%s", text)
	}
	demos, _, _ := strings.Cut(text, "Inspect a call:") // the closing hints name a call again
	lines := strings.Split(demos, "\n")
	count := func(s string) int {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, s) {
				n++
			}
		}
		return n
	}
	for _, demo := range []string{"valid", "truncated", "schema", "stream", "text", "delete"} {
		id := "demo-" + demo + "-" + m[1] + "-0"
		if n := count(id); n != 1 {
			t.Errorf("call %s is on %d lines of the terminal, want 1:\n%s", id, n, text)
		}
	}
	if n := count("inv_0001"); n != 1 {
		t.Errorf("the executed invoice is on %d lines, want 1 (publish's result):\n%s", n, text)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if strings.TrimSpace(l) != "" && seen[l] {
			t.Errorf("line printed twice: %q", l)
		}
		seen[l] = true
	}
	// How to open the console, and where its login token is (never the token).
	tokens := filepath.Join(dir, "secrets", "console-tokens")
	if !strings.Contains(text, "/console/") || !strings.Contains(text, "log in with the operator's token from "+tokens) {
		t.Errorf("make run does not say how to open the console and log in:\n%s", text)
	}
	if b, err := os.ReadFile(tokens); err != nil {
		t.Errorf("no console token file: %v", err)
	} else if f := strings.Fields(string(b)); len(f) < 3 || strings.Contains(text, f[len(f)-1]) {
		t.Errorf("the console token is on the terminal, or the file has none:\n%s", text)
	}
	// Before, the README's examples said 4222 and make run listened on
	// 4322, with no word of it but a "Publish more" hint; now it prints the
	// environment to paste, and pasted, it points at this toolgate.
	export := regexp.MustCompile(`(?m)^  export TOOLGATE_NATS_URL=.*$`).FindString(text)
	if export == "" {
		t.Fatalf("make run prints no environment to paste:\n%s", text)
	}
	sh := exec.Command("bash", "-c", export+`; printf '%s\n' "$TOOLGATE_NATS_URL" "$NATS_URL" "$TOOLGATE_SECRETS" "$(command -v toolgate)"`)
	sh.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
	got, err := sh.Output()
	if want := fmt.Sprintf("nats://%s\nnats://%s\n%s\n%s\n", listen, listen, filepath.Join(dir, "secrets"), filepath.Join(bin, "toolgate")); err != nil || string(got) != want {
		t.Errorf("pasting %q gives %q (%v), want %q", export, got, err, want)
	}
	log, err := os.ReadFile(filepath.Join(dir, "up.log"))
	if err != nil || !strings.Contains(string(log), "transition call_id=demo-truncated-"+m[1]+"-0") {
		t.Errorf("up.log lacks the server's lines (%v):\n%s", err, log)
	}
	if ex, err := os.ReadFile(filepath.Join(dir, "executor.log")); err != nil || !strings.Contains(string(ex), "inv_0001") {
		t.Errorf("executor.log lacks the executor's lines (%v):\n%s", err, ex)
	}
}
