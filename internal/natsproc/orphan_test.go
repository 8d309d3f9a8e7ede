package natsproc

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// orphanEnv makes the test binary the parent that starts a server and is
// then killed (TestServer_ends_when_the_process_that_started_it_dies).
const orphanEnv = "NATSPROC_ORPHAN_BIN"

// A bench killed mid-run (Ctrl-C, a closed pipe, SIGKILL) runs none of its
// deferred Stops: its nats-server children kept running, each holding its
// ports and hundreds of MiB. The kernel now ends them with their parent.
func TestServer_ends_when_the_process_that_started_it_dies(t *testing.T) {
	if bin := os.Getenv(orphanEnv); bin != "" {
		s, err := StartServer(bin, t.TempDir(), 1)
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString(strconv.Itoa(s.PID()) + "\n")
		select {} // until killed
	}
	bin, err := Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestServer_ends_when_the_process_that_started_it_dies$", "-test.count=1")
	parent.Env = append(os.Environ(), orphanEnv+"="+bin)
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(line[:max(len(line)-1, 0)])
	if err != nil || perr != nil || pid <= 0 {
		_ = parent.Process.Kill()
		_ = parent.Wait()
		t.Fatalf("the parent printed %q (%v, %v), want the server's pid", line, err, perr)
	}
	_ = parent.Process.Signal(syscall.SIGKILL)
	_ = parent.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("nats-server %d still runs 10 s after the process that started it was killed", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
