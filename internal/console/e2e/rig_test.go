package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/console"
	"github.com/toolgate/toolgate/internal/secrets"
	"github.com/toolgate/toolgate/internal/testenv"
)

// root is the module's root, from this package's directory.
const root = "../../.."

var bins struct {
	once               sync.Once
	dir                string
	toolgate, executor string
	err                error
}

// binaries builds the toolgate command and the example executor once per
// test binary, as a user builds them.
func binaries(t *testing.T) (toolgate, executor string) {
	t.Helper()
	bins.once.Do(func() {
		bins.dir, bins.err = os.MkdirTemp("", "toolgate-e2e-bin-")
		if bins.err != nil {
			return
		}
		bins.toolgate, bins.executor = filepath.Join(bins.dir, "toolgate"), filepath.Join(bins.dir, "executor")
		for _, b := range [][2]string{{bins.toolgate, "./services/toolgate"}, {bins.executor, "./examples/executor"}} {
			cmd := exec.Command("go", "build", "-o", b[0], b[1])
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				bins.err = fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
				return
			}
		}
	})
	if bins.err != nil {
		t.Fatal(bins.err)
	}
	return bins.toolgate, bins.executor
}

func cleanBinaries() {
	if bins.dir != "" {
		_ = os.RemoveAll(bins.dir)
	}
}

// up is a running `toolgate up` with the example tools, and the example
// executor beside it.
type up struct {
	bin, url, http, secrets string
	// token is the first operator's console token, from the token file
	// up wrote in its secrets directory (empty with upOptions.Tokens).
	token         string
	base          string // the console's URL, ending in /console/
	log, executor *testenv.SyncBuffer
}

// upOptions: Tokens, when set, is the console's tokens file content
// (lines `<role> <name> <token>`), given to up as TOOLGATE_CONSOLE_TOKENS.
type upOptions struct {
	Tokens string
}

// startUp runs `toolgate up` on free loopback ports with its data and
// secrets in a temporary directory, waits until every stage is ready,
// then runs the example executor and waits until it serves.
func startUp(t *testing.T, o upOptions) *up {
	t.Helper()
	bin, executor := binaries(t)
	dir := t.TempDir()
	hostPort := func() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t))) }
	listen, httpAddr, ingest := hostPort(), hostPort(), hostPort()
	u := &up{bin: bin, url: "nats://" + listen, http: httpAddr, secrets: filepath.Join(dir, "secrets"), log: &testenv.SyncBuffer{}, executor: &testenv.SyncBuffer{}}
	env := append(os.Environ(), "TOOLGATE_SECRETS=", "TOOLGATE_NATS_USER=", "TOOLGATE_CONSOLE_TOKENS=")
	if o.Tokens != "" {
		tokens := filepath.Join(dir, "console-tokens")
		if err := os.WriteFile(tokens, []byte(o.Tokens), 0o600); err != nil {
			t.Fatal(err)
		}
		env = append(env, "TOOLGATE_CONSOLE_TOKENS="+tokens)
	}
	abs, err := filepath.Abs(filepath.Join(root, "examples", "tools.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	run(t, "toolgate up", u.log, env, bin, "up", "--listen", listen, "--http", httpAddr, "--ingest-http", ingest,
		"--data", filepath.Join(dir, "data"), "--secrets", u.secrets, "--tools", abs, "--log-level", "info",
		"--identity-assert-users", "producer") // publish's --roles admin counts (issue 28)
	testenv.Eventually(t, 60*time.Second, 50*time.Millisecond, func() error {
		resp, err := http.Get("http://" + httpAddr + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New("readyz: " + resp.Status)
		}
		return nil
	})
	run(t, "executor", u.executor, append(os.Environ(), "TOOLGATE_NATS_URL="+u.url, "TOOLGATE_SECRETS="+u.secrets, "TOOLGATE_NATS_USER=", "TOOLGATE_EXEC_PUBLIC_KEY="), executor)
	pw, err := secrets.Read(u.secrets, authz.PasswordFile(authz.Admin))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(u.url, authz.ClientOptions(authz.Admin, pw)...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// Serving once its micro service answers discovery.
	testenv.Eventually(t, 60*time.Second, 100*time.Millisecond, func() error {
		_, err := nc.Request("$SRV.PING."+authz.ExampleGroup, nil, time.Second)
		return err
	})
	u.base = "http://" + httpAddr + "/console/"
	if o.Tokens == "" {
		roles, _, err := console.LoadTokens(filepath.Join(u.secrets, console.TokenFile))
		if err != nil || len(roles) != 1 {
			t.Fatalf("the token file toolgate up wrote: %v, %v: want one token", roles, err)
		}
		for tok := range roles {
			u.token = tok
		}
	}
	return u
}

// operatorTab is a new tab logged in as the first operator, with the
// token toolgate up wrote.
func (u *up) operatorTab(t *testing.T) context.Context {
	t.Helper()
	tab := newTab(t)
	login(t, tab, u, u.token, false)
	return tab
}

// run starts a process whose output goes to out, stopped (SIGTERM, then
// waited for) at the test's end; its output is logged when the test failed.
func run(t *testing.T, name string, out *testenv.SyncBuffer, env []string, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, out.String())
		}
	})
}

// console is the console's URL for path ("approvals", "calls/ID", "").
func (u *up) console(path string) string {
	return u.base + path
}

// cli runs a toolgate command as an operator beside up does (admin user,
// up's secrets) and returns its output.
func (u *up) cli(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(u.bin, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "TOOLGATE_NATS_URL="+u.url, "TOOLGATE_SECRETS="+u.secrets, "TOOLGATE_NATS_USER=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustCLI is cli for a command that has to succeed.
func (u *up) mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := u.cli(t, args...)
	if err != nil {
		t.Fatalf("toolgate %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// executionsAtLeast waits until the executor's lines count at least n runs
// of tool and returns the count then. The executor prints its line before
// it answers, but the line reaches the test through the process's stdout
// pipe, copied on its own: a call can show executed before its line is in.
func (u *up) executionsAtLeast(t *testing.T, tool string, n int) int {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		if got := u.executions(tool); got < n {
			return fmt.Errorf("%d runs of %s in the executor's output so far, want %d", got, tool, n)
		}
		return nil
	})
	return u.executions(tool)
}

// executions counts the executor's lines for tool: one per run of it.
func (u *up) executions(tool string) int {
	n := 0
	for _, line := range strings.Split(u.executor.String(), "\n") {
		if strings.HasPrefix(line, "executor: "+tool+" ") {
			n++
		}
	}
	return n
}
