package main

import (
	"bytes"
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
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/secrets"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

var (
	upBuild    sync.Once
	upBin      string
	upBuildErr error
)

// upBinary builds this command once per test run.
func upBinary(t *testing.T) string {
	t.Helper()
	upBuild.Do(func() {
		dir, err := os.MkdirTemp("", "toolgate-up-")
		if err != nil {
			upBuildErr = err
			return
		}
		upBin = filepath.Join(dir, "toolgate")
		cmd := exec.Command("go", "build", "-o", upBin, ".")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			upBuildErr = fmt.Errorf("go build: %v\n%s", err, out.String())
		}
	})
	if upBuildErr != nil {
		t.Fatal(upBuildErr)
	}
	return upBin
}

// runningUp is a `toolgate up` process started as a user starts it.
type runningUp struct {
	url, secrets string
	http         string // the --http address: /readyz, /metrics, /console/
	log          *bytes.Buffer
}

// startUp runs `toolgate up` with the example tools on free loopback
// ports, its data and secrets in a temporary directory, and waits until
// every stage is ready. TOOLGATE_SECRETS points the CLI code of this test
// process (connect) at its secrets, as running beside it does.
func startUp(t *testing.T, extra ...string) *runningUp {
	t.Helper()
	bin := upBinary(t)
	dir := t.TempDir()
	port, httpAddr := testenv.FreePort(t), net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t)))
	u := &runningUp{url: fmt.Sprintf("nats://127.0.0.1:%d", port), secrets: filepath.Join(dir, "secrets"), http: httpAddr, log: &bytes.Buffer{}}
	// The HTTP ingest on a free port too (extra may move it): its default
	// is one fixed port, which parallel tests would fight over.
	ingest := net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t)))
	args := append([]string{"up", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--http", httpAddr, "--ingest-http", ingest, "--data", filepath.Join(dir, "data"),
		"--secrets", u.secrets, "--tools", "../../examples/tools.yaml", "--log-level", "info"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "TOOLGATE_SECRETS=")
	cmd.Stdout, cmd.Stderr = u.log, u.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("toolgate up log:\n%s", u.log.String())
		}
	})
	testenv.Eventually(t, 60*time.Second, 50*time.Millisecond, func() error {
		resp, err := http.Get("http://" + httpAddr + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		return nil
	})
	t.Setenv("TOOLGATE_SECRETS", u.secrets)
	t.Setenv("TOOLGATE_NATS_USER", "")
	return u
}

// password reads a user's generated password.
func (u *runningUp) password(t *testing.T, user string) string {
	t.Helper()
	pw, err := secrets.Read(u.secrets, authz.PasswordFile(user))
	if err != nil {
		t.Fatal(err)
	}
	return pw
}

// denials collects the permission violations the server reports to a
// connection.
type denials struct {
	mu   sync.Mutex
	errs []error
}

func (d *denials) handler(_ *nats.Conn, _ *nats.Subscription, err error) {
	d.mu.Lock()
	d.errs = append(d.errs, err)
	d.mu.Unlock()
}

// of waits until the server reported a violation naming subject.
func (d *denials) of(t *testing.T, subject string) {
	t.Helper()
	testenv.Eventually(t, 3*time.Second, 10*time.Millisecond, func() error {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, err := range d.errs {
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `"`+subject+`"`) {
				return nil
			}
		}
		return fmt.Errorf("no permissions violation reported for %s (have %v)", subject, d.errs)
	})
}

// dial connects with opts and a denials collector.
func dial(t *testing.T, url string, opts ...nats.Option) (*nats.Conn, *denials) {
	t.Helper()
	d := &denials{}
	nc, err := nats.Connect(url, append(opts, nats.ErrorHandler(d.handler))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, d
}

// serveExamples serves the example tools as the example executor does
// (its own user), counting every request that reaches it.
func serveExamples(t *testing.T, u *runningUp) (*atomic.Int32, chan string) {
	t.Helper()
	nc, _ := dial(t, u.url, authz.ClientOptions(authz.Executor, u.password(t, authz.Executor))...)
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

func TestTrust_unauthenticated_client_may_only_publish_ingest(t *testing.T) {
	u := startUp(t)
	runs, _ := serveExamples(t, u)
	anon, denied := dial(t, u.url)

	for _, subj := range []string{streams.Exec(">"), streams.Exec("delete_customer_account"), "$SRV.>", "_INBOX.>", authz.InboxPrefix(authz.Admin) + ".>", streams.ResultsAll(), streams.ProgressAll()} {
		if _, err := anon.Subscribe(subj, func(m *nats.Msg) { t.Errorf("the unauthenticated client received %s", m.Subject) }); err != nil {
			t.Fatal(err)
		}
		if err := anon.Flush(); err != nil {
			t.Fatal(err)
		}
		denied.of(t, subj)
	}
	// Running a tool directly, purging the input, deleting the dead
	// letters or a consumer, and writing a tool definition are refused.
	for _, subj := range []string{
		streams.Exec("delete_customer_account"),
		"$JS.API.STREAM.PURGE." + streams.StreamIn,
		"$JS.API.STREAM.DELETE." + streams.StreamDLQ,
		"$JS.API.CONSUMER.DELETE." + streams.StreamGates + "." + streams.Execute,
		"$KV." + streams.BucketTools + ".delete_customer_account",
	} {
		if err := anon.PublishMsg(&nats.Msg{Subject: subj, Reply: "_INBOX.x", Data: []byte(`{"customer_id":"cus_1","reason":"x"}`)}); err != nil {
			t.Fatal(err)
		}
		if err := anon.Flush(); err != nil {
			t.Fatal(err)
		}
		denied.of(t, subj)
	}

	// A response is what it may publish.
	if err := anon.Publish(streams.SubjectInResponse, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := anon.Flush(); err != nil {
		t.Fatal(err)
	}
	_, js, err := connect(u.url) // the admin, from the secrets directory
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
		st, err := js.Stream(ctx, streams.StreamIn)
		if err != nil {
			return err
		}
		if info, err := st.Info(ctx); err != nil || info.State.LastSeq == 0 {
			return fmt.Errorf("the response did not reach %s: %v", streams.StreamIn, err)
		}
		return nil
	})
	for _, name := range []string{streams.StreamIn, streams.StreamDLQ, streams.StreamGates} {
		if _, err := js.Stream(ctx, name); err != nil {
			t.Errorf("stream %s: %v", name, err)
		}
	}
	if _, err := js.Consumer(ctx, streams.StreamGates, streams.Execute); err != nil {
		t.Errorf("the execute consumer: %v", err)
	}
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := kv.Get(ctx, "delete_customer_account"); err != nil || e.Revision() != 3 {
		t.Errorf("the definition of delete_customer_account: %v (revision %v), want the one applied at start", err, e)
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("the executor received %d requests from the unauthenticated client", n)
	}
}

func TestTrust_admin_replies_are_private(t *testing.T) {
	u := startUp(t)
	_, replies := serveExamples(t, u)
	nc, _, err := connect(u.url) // the CLI: admin, found in the secrets directory
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Request(streams.Exec("get_weather"), []byte(`{"city":"Oslo"}`), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if r := <-replies; !strings.HasPrefix(r, authz.InboxPrefix(authz.Admin)+".") {
		t.Fatalf("the admin's reply subject is %s, want one under %s", r, authz.InboxPrefix(authz.Admin))
	}
	// Nobody else may read them: not a stage, not a producer, not an
	// executor, not the unauthenticated client.
	for _, user := range []string{streams.Parse, authz.Producer, authz.Executor, ""} {
		var opts []nats.Option
		if user != "" {
			opts = authz.ClientOptions(user, u.password(t, user))
		}
		spy, denied := dial(t, u.url, opts...)
		for _, subj := range []string{authz.InboxPrefix(authz.Admin) + ".>", "_INBOX.>", ">"} {
			if _, err := spy.Subscribe(subj, func(m *nats.Msg) { t.Errorf("%q read %s", user, m.Subject) }); err != nil {
				t.Fatal(err)
			}
			if err := spy.Flush(); err != nil {
				t.Fatal(err)
			}
			denied.of(t, subj)
		}
	}
	// The CLI's JetStream calls are answered on the same private prefix.
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		t.Fatalf("the admin's JetStream request: %v", err)
	}
}
