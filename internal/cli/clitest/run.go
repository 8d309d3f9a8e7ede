package clitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// RunMain runs the real main (the toolgate binary, built once: upBinary)
// in a child process with args and env and returns its output (stdout and
// stderr) and exit code.
func RunMain(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(UpBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	}
	t.Fatalf("toolgate %v: %v", args, err)
	return "", 0
}

// RunCmd runs the command function cmd (e.g. `toolgate publish`) with
// args in this process with stdin fed from stdin (nil: the test's own) and
// returns what it printed on stdout and stderr and the exit code main would
// exit with.
func RunCmd(t *testing.T, stdin []byte, cmd func([]string) error, args ...string) (string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr, oldIn := os.Stdout, os.Stderr, os.Stdin
	os.Stdout, os.Stderr = w, w
	if stdin != nil {
		in := filepath.Join(t.TempDir(), "stdin")
		if err := os.WriteFile(in, stdin, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		os.Stdin = f
	}
	done := make(chan string)
	go func() {
		var b bytes.Buffer
		_, _ = io.Copy(&b, r)
		done <- b.String()
	}()
	code := cmdutil.ExitCode(cmd(args))
	os.Stdout, os.Stderr, os.Stdin = oldOut, oldErr, oldIn
	w.Close()
	out := <-done
	r.Close()
	t.Logf("%s: exit %d\n%s", strings.Join(args, " "), code, out)
	return out, code
}

// WriteFile writes data to a file called name in a temporary directory
// and returns its path.
func WriteFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// ChatBody is an OpenAI chat completion proposing one call.
func ChatBody(rid, tool, args string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id": rid, "object": "chat.completion", "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{
			"role": "assistant", "tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
				"function": map[string]any{"name": tool, "arguments": args}}}}}},
	})
	return b
}

// ToolsYAML is a tools file of tools named names (an http executor for
// names starting with "http_").
func ToolsYAML(names ...string) string {
	var b strings.Builder
	b.WriteString("tools:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  - name: %s\n    input_schema: {type: object}\n    policy: {risk: read}\n", n)
		if strings.HasPrefix(n, "http_") {
			b.WriteString("    executor: {type: http, url: \"https://tools.example/run\"}\n")
		}
	}
	return b.String()
}
