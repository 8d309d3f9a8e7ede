package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

// Before, a tool no executor group lists was accepted in silence: its calls
// passed every gate and then waited for an executor that may not subscribe.
// Now toolgate up warns for it at start and when it is applied later.
func TestWarnUncovered_at_start_and_when_applied_later(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	apply := func(names ...string) {
		t.Helper()
		defs, err := tool.Load("tools.yaml", []byte(clitest.ToolsYAML(names...)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := registry.Apply(ctx, kv, "tools.yaml", defs, false); err != nil {
			t.Fatal(err)
		}
	}
	apply("get_weather", "refund", "http_lookup")
	groups, err := authz.ParseGroups(authz.DefaultGroups())
	if err != nil {
		t.Fatal(err)
	}
	log := &testenv.SyncBuffer{}
	go func() { _ = warnUncovered(ctx, js, groups, authz.DefaultGroups(), nil, newLogger(log, false)) }()
	warned := func(tool string) error {
		if !strings.Contains(log.String(), "no executor group may serve tool "+tool) {
			return fmt.Errorf("no warning for %s:\n%s", tool, log.String())
		}
		return nil
	}
	testenv.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error { return warned("refund") })
	if !strings.Contains(log.String(), "--executor-groups 'example=create_invoice,get_weather,delete_customer_account,refund'") {
		t.Errorf("the warning does not say how to cover it:\n%s", log.String())
	}
	apply("transfer_funds")
	testenv.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error { return warned("transfer_funds") })
	apply("refund") // an unchanged re-apply: warned once is enough
	apply("wire_money")
	testenv.Eventually(t, 10*time.Second, 10*time.Millisecond, func() error { return warned("wire_money") })
	out := log.String()
	for _, covered := range []string{"tool get_weather", "tool http_lookup"} {
		if strings.Contains(out, covered) {
			t.Errorf("warned for %s, which a group or an http executor covers:\n%s", covered, out)
		}
	}
	if n := strings.Count(out, "may serve tool refund"); n != 1 {
		t.Errorf("warned %d times for refund, want once:\n%s", n, out)
	}
}

// toolgate up itself gives the tools of --tools that no group covers a
// group of their own at start (up_groups.go); it warned and asked for a
// restart before.
func TestUp_gives_tools_no_executor_group_covers_a_group_at_start(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(file, []byte(clitest.ToolsYAML("get_weather", "refund")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, out := upHolding(t, filepath.Join(t.TempDir(), "data"), "--tools", file)
	testenv.Eventually(t, 60*time.Second, 20*time.Millisecond, func() error {
		if !strings.Contains(out.String(), "executor group refund now serves tool refund: its executor connects as executor-refund, no restart") {
			return fmt.Errorf("no group for refund:\n%s", out.String())
		}
		return nil
	})
	if strings.Contains(out.String(), "tool get_weather:") || strings.Contains(out.String(), "may serve tool") {
		t.Errorf("a group made for get_weather, which group example serves, or a warning:\n%s", out.String())
	}
}
