package run

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/cli/clitest"
	"github.com/toolgate/toolgate/internal/testenv"
)

// upArgs are the arguments of a toolgate up on data with free ports, no
// health or HTTP ingest address, and its own secrets.
func upArgs(t *testing.T, data string) []string {
	return []string{"up", "--listen", fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)), "--http=", "--ingest-http=", "--data", data, "--secrets", t.TempDir()}
}

// upHolding runs `toolgate up` with args as a child process on a fresh port
// and returns it, its output and its data directory once it holds the data
// directory's lock.
func upHolding(t *testing.T, data string, args ...string) (*exec.Cmd, *testenv.SyncBuffer) {
	t.Helper()
	all := append(upArgs(t, data), args...)
	cmd := exec.Command(clitest.UpBinary(t), all...)
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := strconv.Itoa(cmd.Process.Pid)
	testenv.Eventually(t, 60*time.Second, 20*time.Millisecond, func() error {
		if got := holder(filepath.Join(data, lockFile)); got != pid {
			return fmt.Errorf("lock file names pid %s, want %s; output:\n%s", got, pid, out.String())
		}
		return nil
	})
	return cmd, out
}

// Before, two toolgate up on one data directory both ran, two JetStream
// servers on one store. Now the second refuses at once, naming the pid of
// the first; a kill -9 leaves no lock behind.
func TestUp_second_on_one_data_directory_refuses_naming_the_first(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	first, _ := upHolding(t, data)
	pid := strconv.Itoa(first.Process.Pid)

	// The second runs as a user runs it; before the lock it started too.
	second := exec.Command(clitest.UpBinary(t), append(upArgs(t, data), "--log-level", "info")...)
	out := &testenv.SyncBuffer{}
	second.Stdout, second.Stderr = out, out
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Process.Kill() })
	exited := make(chan error, 1)
	go func() { exited <- second.Wait() }()
	var err error
	ended := false
	testenv.Eventually(t, 60*time.Second, 20*time.Millisecond, func() error {
		select {
		case err = <-exited:
			ended = true
			return nil
		default:
		}
		if strings.Contains(out.String(), "embedded NATS with JetStream running") {
			return nil
		}
		return errors.New("the second toolgate up neither refused nor started")
	})
	if !ended {
		t.Fatalf("a second toolgate up on %s runs beside pid %s:\n%s", data, pid, out.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(out.String(), "pid "+pid) || !strings.Contains(out.String(), "in use by another toolgate up") {
		t.Fatalf("second toolgate up on %s: %v\n%s\nwant exit 1 and a refusal naming pid %s", data, err, out.String(), pid)
	}

	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	release, err := lockData(data) // the stale file does not block
	if err != nil {
		t.Fatalf("after kill -9 of the holder: %v", err)
	}
	if got := holder(filepath.Join(data, lockFile)); got != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file names %s, want this process", got)
	}
	release()
	if release, err = lockData(data); err != nil {
		t.Fatalf("after release: %v", err)
	}
	release()
}
