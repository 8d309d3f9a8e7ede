package deploy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/natsusers"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// TestMain removes the binaries built once for the whole package.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds services/<name> once per test run and returns its path.
func binary(t *testing.T, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "toolgate-bin-"); buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir+string(os.PathSeparator), "./services/validate")
		cmd.Dir = ".."
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out.String())
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, name)
}

// replica is one OS process of a stage.
type replica struct {
	cmd  *exec.Cmd
	http string
	log  *bytes.Buffer
}

var handled = regexp.MustCompile(`(?m)^toolgate_stage_handle_seconds_count\{[^}]*stage="validate"[^}]*\} (\d+)$`)

// handled is how many inputs this process's validate worker handled, from
// its own /metrics.
func (r *replica) handled() (int, error) {
	resp, err := http.Get("http://" + r.http + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	n := 0
	for _, m := range handled.FindAllSubmatch(body, -1) {
		v, _ := strconv.Atoi(string(m[1]))
		n += v
	}
	return n, nil
}

func startReplica(t *testing.T, bin, natsURL, sealDir string) *replica {
	t.Helper()
	r := &replica{http: net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t))), log: &bytes.Buffer{}}
	r.cmd = exec.Command(bin)
	r.cmd.Env = append(os.Environ(),
		"TOOLGATE_NATS_URL="+natsURL, "TOOLGATE_HTTP_ADDR="+r.http, "TOOLGATE_LOG_LEVEL=warn",
		"TOOLGATE_ENSURE=false", "TOOLGATE_NATS_USER="+streams.Validate, "TOOLGATE_NATS_PASSWORD=pw-"+streams.Validate, "TOOLGATE_SEAL_KEYS="+sealDir)
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		_ = r.cmd.Wait()
		if t.Failed() {
			t.Logf("replica %s log:\n%s", r.http, r.log.String())
		}
	})
	testenv.Eventually(t, 20*time.Second, 50*time.Millisecond, func() error {
		resp, err := http.Get("http://" + r.http + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz %s", resp.Status)
		}
		return nil
	})
	return r
}

// TestScale_three_validate_processes_share_the_work_and_survive_a_kill runs
// the validate stage as three OS processes (its own NATS user, as in
// deploy/) beside the other stages, checks that each process handles a
// share, then SIGKILLs one under load: the other two finish its unacked work
// after AckWait, and every call has exactly one outcome.
func TestScale_three_validate_processes_share_the_work_and_survive_a_kill(t *testing.T) {
	bin := binary(t, "validate")
	pw := map[string]string{}
	for _, u := range authz.Names() {
		pw[u] = "pw-" + u
	}
	users, err := natsusers.Users(pw)
	if err != nil {
		t.Fatal(err)
	}
	srv := testenv.RunJetStream(t, func(o *server.Options) { o.Users = users })
	conn := func(user string) *nats.Conn {
		nc, err := nats.Connect(srv.ClientURL(), authz.ClientOptions(user, pw[user])...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	admin := conn(authz.Admin)
	ajs, _ := jetstream.New(admin)
	settings := streams.DefaultSettings()
	settings.AckWait = 2 * time.Second // a killed replica's unacked work comes back quickly
	if err := streams.Ensure(context.Background(), ajs, settings); err != nil {
		t.Fatal(err)
	}
	k := trustKeys(t)
	r := newRig(t, admin, conn(authz.Executor), k)
	var others []string
	for _, st := range streams.Names() {
		if st != streams.Validate {
			others = append(others, st)
		}
	}
	runStages(t, srv.ClientURL(), others, true, settings, k, func(st string) []nats.Option { return authz.ClientOptions(st, pw[st]) })
	reps := []*replica{startReplica(t, bin, srv.ClientURL(), k.sealDir), startReplica(t, bin, srv.ClientURL(), k.sealDir), startReplica(t, bin, srv.ClientURL(), k.sealDir)}

	var rids []string
	for i := range 300 {
		rid := fmt.Sprintf("share-%d", i)
		if !r.publish(rid) {
			t.Fatalf("%s not accepted", rid)
		}
		rids = append(rids, rid)
	}
	r.exactlyOnce(rids, 30*time.Second)
	shares := make([]int, len(reps))
	total := 0
	for i, rep := range reps {
		if shares[i], err = rep.handled(); err != nil {
			t.Fatal(err)
		}
		total += shares[i]
	}
	t.Logf("validate inputs handled per process: %v", shares)
	for i, n := range shares {
		if n == 0 {
			t.Errorf("process %d handled nothing of %d: replicas do not share the work (%v)", i, total, shares)
		}
	}
	if total != len(rids) {
		t.Errorf("the processes handled %d inputs for %d calls", total, len(rids))
	}

	// Under load, kill one replica without a chance to drain.
	before := shares[0]
	more := make([]string, 600)
	published := make(chan error, 1)
	go func() {
		for i := range more {
			more[i] = fmt.Sprintf("kill-%d", i)
			if !r.publish(more[i]) {
				published <- fmt.Errorf("%s not accepted", more[i])
				return
			}
		}
		published <- nil
	}()
	testenv.Eventually(t, 20*time.Second, 2*time.Millisecond, func() error {
		n, err := reps[0].handled()
		if err != nil {
			return err
		}
		if n < before+10 {
			return fmt.Errorf("victim handled %d new inputs", n-before)
		}
		return nil
	})
	if err := reps[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = reps[0].cmd.Wait()
	counts, err := r.resultCounts()
	if err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, rid := range more {
		if counts[rid] > 0 {
			done++
		}
	}
	t.Logf("SIGKILL with %d of %d calls of the second load finished", done, len(more))
	if done == len(more) {
		t.Fatal("the load was over before the kill: nothing proven")
	}
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	r.exactlyOnce(append(rids, more...), 45*time.Second)
	for _, rid := range []string{"share-0", "kill-599"} {
		if s := r.status(rid); s != "executed" {
			t.Errorf("%s ended %s, want executed", rid, s)
		}
	}
}
