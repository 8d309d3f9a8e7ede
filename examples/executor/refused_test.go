package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/natsusers"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// TestMain runs the executor itself when asked to, so a test can watch the
// real program start and exit.
func TestMain(m *testing.M) {
	if os.Getenv("EXECUTOR_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestExecutor_exits_non_zero_when_a_tool_subscription_is_refused: run as an
// executor-example user whose group lacks create_invoice (a tool added to
// tools.yaml and not to the group), the executor says which subscription
// was refused and exits 1, never "serving".
func TestExecutor_exits_non_zero_when_a_tool_subscription_is_refused(t *testing.T) {
	c := authz.Config{Groups: []authz.Group{{Name: authz.ExampleGroup, Tools: []string{"get_weather", "delete_customer_account"}}}}
	pw := map[string]string{authz.Admin: "pw-admin", authz.Executor: "pw-executor"}
	users, err := natsusers.ConfigUsers(c, pw)
	if err != nil {
		t.Fatal(err)
	}
	s := testenv.RunJetStream(t, func(o *server.Options) { o.Users = users })
	admin, err := nats.Connect(s.ClientURL(), nats.UserInfo(authz.Admin, "pw-admin"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	js, err := jetstream.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	if err := streams.Ensure(context.Background(), js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := execute.EnsureSigner(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, authz.PasswordFile(authz.Executor)), []byte("pw-executor\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // serving would wait for a signal
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-nats", s.ClientURL())
	cmd.Env = append(os.Environ(), "EXECUTOR_RUN_MAIN=1", "TOOLGATE_SECRETS="+dir, "TOOLGATE_NATS_USER=", "TOOLGATE_EXEC_PUBLIC_KEY=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 {
		t.Fatalf("exit %d (%v), want 1\nstdout: %s\nstderr: %s", code, err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "permissions violation") || !strings.Contains(stderr.String(), "toolgate.exec.create_invoice") {
		t.Fatalf("stderr %q: want the refused subscription named", stderr.String())
	}
	if strings.Contains(stdout.String(), "serving") {
		t.Fatalf("stdout %q: it said serving", stdout.String())
	}
}
