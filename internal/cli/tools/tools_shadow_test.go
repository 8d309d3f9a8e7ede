package tools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

// runTools runs `toolgate tools ARGS...` and returns what it printed and
// its exit code.
func runTools(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := toolsWith(args, ToolsIO{In: strings.NewReader(""), Out: &out, Err: &errb})
	if err != nil && clitest.Code(err) != exitWhatIfRefused {
		return out.String() + errb.String() + err.Error(), clitest.Code(err)
	}
	return out.String() + errb.String(), clitest.Code(err)
}

// TestShadow_apply_report_promote_drop_from_the_command_line: a shadow that
// adds a rule to transfer_funds is reported (exit 3: a call that ran would
// be refused) while the live definitions go on deciding; promote makes it
// live, after which no shadow runs; drop removes another.
func TestShadow_apply_report_promote_drop_from_the_command_line(t *testing.T) {
	r := startWhatIfRig(t, whatIfOld)
	file := filepath.Join(t.TempDir(), "new.yaml")
	if err := os.WriteFile(file, []byte(whatIfNew), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, c := runTools(t, "apply", "--nats", r.URL, "--shadow", "-f", file); c != 0 || !strings.Contains(out, "shadow ") {
		t.Fatalf("apply --shadow: exit %d\n%s", c, out)
	}
	var out string
	n := 0
	testenv.Eventually(t, 20*time.Second, 200*time.Millisecond, func() error {
		n++
		r.Publish(t, fmt.Sprintf("sh-%d", n), clitest.ToolCall{ID: "c", Name: "transfer_funds", Args: `{"amount":5000}`})
		var c int
		out, c = runTools(t, "shadow", "--nats", r.URL, "report")
		if c != exitWhatIfRefused || !strings.Contains(out, "approved → would be rejected: business_invalid (rule 1: no transfer over 1000)") {
			return fmt.Errorf("exit %d:\n%s", c, out)
		}
		return nil
	})
	// The live definitions decided: the calls executed.
	st := settled(t, r.JS, []string{"sh-1"})
	if s := st["sh-1"].Status; s != "executed" {
		t.Fatalf("a call under the shadow ended %s, want executed", s)
	}
	if out, c := runTools(t, "shadow", "--nats", r.URL, "promote"); c != 0 || !strings.Contains(out, "tool transfer_funds changed") {
		t.Fatalf("promote: exit %d\n%s", c, out)
	}
	kv, err := r.JS.KeyValue(context.Background(), streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	if d, _, err := registry.Get(context.Background(), kv, "transfer_funds"); err != nil || len(d.Rules) != 2 {
		t.Fatalf("live transfer_funds after promote: %+v %v", d.Rules, err)
	}
	if out, c := runTools(t, "shadow", "--nats", r.URL, "report"); c == 0 || !strings.Contains(out, "no shadow revision is applied") {
		t.Fatalf("report after promote: exit %d\n%s", c, out)
	}
	if _, c := runTools(t, "apply", "--nats", r.URL, "--shadow", "-f", file); c != 0 {
		t.Fatal("apply --shadow again failed")
	}
	if out, c := runTools(t, "shadow", "--nats", r.URL, "drop"); c != 0 || !strings.Contains(out, "dropped") {
		t.Fatalf("drop: exit %d\n%s", c, out)
	}
	if out, c := runTools(t, "shadow", "--nats", r.URL, "drop"); c == 0 {
		t.Fatalf("a second drop succeeded:\n%s", out)
	}
}
