package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

// fence is one fenced code block of the README: its language and text.
type fence struct{ lang, text string }

// pageSection returns the fenced blocks of the section headed heading of
// page (a path from the repository root), in order.
func pageSection(t *testing.T, page, heading string) []fence {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", page))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no section %q", page, heading)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var out []fence
	var cur *fence
	for _, line := range strings.SplitAfter(sec, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &fence{lang: strings.TrimPrefix(trimmed, "```")}
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line
		}
	}
	return out
}

// normalize makes a command's output and the README's sample of it
// comparable: response ids, revisions, byte counts, the secrets directory
// and column padding vary from run to run.
func normalize(s string) []string {
	for _, r := range []struct{ re, repl string }{
		{`mytool-\d+`, "RID"},
		{`revision \d+`, "revision N"},
		{`\(\d+ bytes\)`, "(N bytes)"},
		{`\S*/nats-executor-`, "SECRETS/nats-executor-"},
		{`[ \t]+`, " "},
	} {
		s = regexp.MustCompile(r.re).ReplaceAllString(s, r.repl)
	}
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// saidAll fails unless every line of the README's sample is a line of got.
func saidAll(t *testing.T, cmd, got, sample string) {
	t.Helper()
	have := map[string]bool{}
	for _, l := range normalize(got) {
		have[l] = true
	}
	for _, l := range normalize(sample) {
		if !have[l] {
			t.Errorf("%s: the README says %q; the command printed:\n%s", cmd, l, got)
		}
	}
}

// docs/tools.md's "Your own tool in five minutes", run as written against a
// toolgate up as make run starts it (the example tools applied): the
// definition and the executor shown are the files the commands use, each
// command runs in a shell from the repository root with the environment
// make run prints, and each prints what the README says it prints.
func TestWalkthrough_your_own_tool_runs_as_written(t *testing.T) {
	blocks := pageSection(t, "docs/tools.md", "## Your own tool in five minutes")
	var langs []string
	for _, b := range blocks {
		langs = append(langs, b.lang)
	}
	if want := "yaml sh text go sh text sh text"; strings.Join(langs, " ") != want {
		t.Fatalf("the walkthrough's blocks are %q, want %q: update this test with the page", strings.Join(langs, " "), want)
	}
	for _, f := range []struct {
		block fence
		file  string
	}{{blocks[0], "mytool.yaml"}, {blocks[3], "main.go"}} {
		b, err := os.ReadFile(filepath.Join("../../examples/mytool", f.file))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != f.block.text {
			t.Errorf("the README's %s block is not examples/mytool/%s", f.block.lang, f.file)
		}
	}

	u := clitest.StartUp(t)
	env := append(os.Environ(), "TOOLGATE_NATS_URL="+u.URL, "TOOLGATE_SECRETS="+u.Secrets,
		"PATH="+filepath.Dir(clitest.UpBinary(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	shell := func(script string) *exec.Cmd {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Dir, cmd.Env = "../..", env
		return cmd
	}
	run := func(script, sample string) {
		t.Helper()
		out, err := shell(script).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.TrimSpace(script), err, out)
		}
		saidAll(t, strings.TrimSpace(script), string(out), sample)
	}

	run(blocks[1].text, blocks[2].text)

	// The executor runs until stopped, in a second terminal in the README.
	exe := shell(blocks[4].text)
	exe.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // go run's child too
	pr, pw := io.Pipe()
	exe.Stdout, exe.Stderr = pw, pw
	if err := exe.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-exe.Process.Pid, syscall.SIGTERM)
		_ = exe.Wait()
		pw.Close()
	})
	var mu sync.Mutex
	var exeOut bytes.Buffer
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			mu.Lock()
			exeOut.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
	}()
	testenv.Eventually(t, 2*time.Minute, 50*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(exeOut.String(), strings.TrimSpace(blocks[5].text)) {
			return fmt.Errorf("%s has not printed %q; it printed:\n%s", strings.TrimSpace(blocks[4].text), strings.TrimSpace(blocks[5].text), exeOut.String())
		}
		return nil
	})

	run(blocks[6].text, blocks[7].text)
}
