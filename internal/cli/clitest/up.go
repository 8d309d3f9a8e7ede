package clitest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/secrets"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// built is the toolgate binary a test run built, or why it could not.
type built struct {
	bin string
	err error
}

// upBuild builds the toolgate command once per test process (the
// arch tests allow a sync.OnceValue at package level: it never changes
// after its one run).
var upBuild = sync.OnceValue(func() built {
	dir, err := os.MkdirTemp("", "toolgate-up-")
	if err != nil {
		return built{err: err}
	}
	bin := filepath.Join(dir, "toolgate")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/toolgate/toolgate/services/toolgate")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return built{err: fmt.Errorf("go build: %v\n%s", err, out.String())}
	}
	return built{bin: bin}
})

// UpBinary builds the toolgate command once per test run.
func UpBinary(t *testing.T) string {
	t.Helper()
	b := upBuild()
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// RunningUp is a `toolgate up` process started as a user starts it.
type RunningUp struct {
	URL, Secrets string
	HTTP         string // the --http address: /readyz, /metrics, /console/
}

// StartUp runs `toolgate up` with the example tools on free loopback
// ports, its data and secrets in a temporary directory, and waits until
// every stage is ready. TOOLGATE_SECRETS points the CLI code of this test
// process (connect) at its secrets, as running beside it does.
func StartUp(t *testing.T, extra ...string) *RunningUp {
	t.Helper()
	dir := t.TempDir()
	port, httpAddr := testenv.FreePort(t), net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t)))
	u := &RunningUp{URL: fmt.Sprintf("nats://127.0.0.1:%d", port), Secrets: filepath.Join(dir, "secrets"), HTTP: httpAddr}
	// The HTTP ingest on a free port too (extra may move it): its default
	// is one fixed port, which parallel tests would fight over.
	ingest := net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t)))
	args := append([]string{"up", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--http", httpAddr, "--ingest-http", ingest, "--data", filepath.Join(dir, "data"),
		"--secrets", u.Secrets, "--tools", filepath.Join(moduleRoot(), "examples", "tools.yaml"), "--log-level", "info"}, extra...)
	RunBin(t, httpAddr, []string{"TOOLGATE_SECRETS="}, args...)
	t.Setenv("TOOLGATE_SECRETS", u.Secrets)
	t.Setenv("TOOLGATE_NATS_USER", "")
	return u
}

// RunBin starts the toolgate binary with args and env (added to this
// process's), stopped with SIGTERM in cleanup (its output logged when the
// test failed), and waits until http://addr/readyz answers 200. It returns
// the output so far and to come.
func RunBin(t *testing.T, addr string, env []string, args ...string) *bytes.Buffer {
	t.Helper()
	out := &bytes.Buffer{}
	cmd := exec.Command(UpBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("toolgate %s log:\n%s", args[0], out.String())
		}
	})
	testenv.Eventually(t, 60*time.Second, 50*time.Millisecond, func() error {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		return nil
	})
	return out
}

// Password reads a user's generated password.
func (u *RunningUp) Password(t *testing.T, user string) string {
	t.Helper()
	pw, err := secrets.Read(u.Secrets, authz.PasswordFile(user))
	if err != nil {
		t.Fatal(err)
	}
	return pw
}

// Denials collects the permission violations the server reports to a
// connection.
type Denials struct {
	Mu   sync.Mutex
	Errs []error
}

func (d *Denials) Handler(_ *nats.Conn, _ *nats.Subscription, err error) {
	d.Mu.Lock()
	d.Errs = append(d.Errs, err)
	d.Mu.Unlock()
}

// Of waits until the server reported a violation naming subject.
func (d *Denials) Of(t *testing.T, subject string) {
	t.Helper()
	testenv.Eventually(t, 3*time.Second, 10*time.Millisecond, func() error {
		d.Mu.Lock()
		defer d.Mu.Unlock()
		for _, err := range d.Errs {
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `"`+subject+`"`) {
				return nil
			}
		}
		return fmt.Errorf("no permissions violation reported for %s (have %v)", subject, d.Errs)
	})
}

// Dial connects with opts and a denials collector.
func Dial(t *testing.T, url string, opts ...nats.Option) (*nats.Conn, *Denials) {
	t.Helper()
	d := &Denials{}
	nc, err := nats.Connect(url, append(opts, nats.ErrorHandler(d.Handler))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, d
}

// ServeExamples serves the example tools as the example executor does
// (its own user), counting every request that reaches it.
func ServeExamples(t *testing.T, u *RunningUp) (*atomic.Int32, chan string) {
	t.Helper()
	nc, _ := Dial(t, u.URL, authz.ClientOptions(authz.Executor, u.Password(t, authz.Executor))...)
	var runs atomic.Int32
	replies := make(chan string, 16)
	for _, tool := range authz.ExampleTools() {
		if _, err := nc.Subscribe(streams.Exec(tool), func(m *nats.Msg) {
			runs.Add(1)
			replies <- m.Reply
			_ = m.Respond([]byte(`{"ok":true,"result":{}}`))
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return &runs, replies
}

// moduleRoot is the repository's root directory, from this file's path.
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}
