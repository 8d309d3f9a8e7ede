package testenv

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a real redis-server process owned by one test.
type Redis struct {
	Addr string
	port int
	dir  string
	cmd  *exec.Cmd
	t    testing.TB
}

// RunRedis starts redis-server on a free port with no persistence, ready
// when PING answers, and kills it in cleanup. A missing binary fails the
// test: `.ci/run` installs it.
func RunRedis(t testing.TB) *Redis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("testenv: redis-server not found in PATH (apt-get install redis-server): %v", err)
	}
	r := &Redis{port: FreePort(t), dir: t.TempDir(), t: t}
	r.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port))
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// Start starts the server (again, after Stop) on the same port.
func (r *Redis) Start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server",
		"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir)
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("testenv: start redis-server: %v", err)
	}
	c := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer c.Close()
	Eventually(r.t, 10*time.Second, 20*time.Millisecond, func() error {
		return c.Ping(context.Background()).Err()
	})
}

// Stop kills the server and waits for it to exit.
func (r *Redis) Stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}

// URL is the redis:// URL of the server.
func (r *Redis) URL() string { return "redis://" + r.Addr }

// FreePort returns a TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(fmt.Errorf("testenv: free port: %w", err))
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
