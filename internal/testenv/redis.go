package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOptions configures StartRedis. Dir is required (created if missing).
type RedisOptions struct {
	Dir string
	// Durable persists every write before it answers (appendonly,
	// appendfsync always), so a SIGKILL loses no acknowledged write; false
	// keeps nothing on disk (--save "" --appendonly no).
	Durable bool
	// LogFile, if set, is redis-server's log; otherwise it logs nowhere.
	LogFile string
}

// Redis is a real redis-server process on a fixed port and directory.
type Redis struct {
	Addr string
	opts RedisOptions
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// StartRedis starts redis-server on 127.0.0.1 and a free port and returns
// once PING answers. It needs no *testing.T.
func StartRedis(o RedisOptions) (*Redis, error) {
	if o.Dir == "" {
		return nil, errors.New("testenv: RedisOptions.Dir is required")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, fmt.Errorf("testenv: redis-server not found in PATH (apt-get install redis-server): %w", err)
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	port, err := Port()
	if err != nil {
		return nil, err
	}
	r := &Redis{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), opts: o, port: port}
	return r, r.Start()
}

// RunRedis starts redis-server with no persistence in a fresh directory,
// and kills it in cleanup. A missing binary fails the test: `.ci/run`
// installs it.
func RunRedis(t testing.TB) *Redis {
	t.Helper()
	r, err := StartRedis(RedisOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

// Start starts the server (again, after Stop) on the same port and
// directory, and returns once PING answers; a durable server reloads its
// append-only file.
func (r *Redis) Start() error {
	args := []string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--save", ""}
	if r.opts.Durable {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	args = append(args, "--dir", r.opts.Dir)
	if r.opts.LogFile != "" {
		args = append(args, "--logfile", r.opts.LogFile)
	}
	r.cmd = exec.Command("redis-server", args...)
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("testenv: start redis-server: %w", err)
	}
	r.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(r.cmd, r.done)
	c := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer c.Close()
	return Poll(30*time.Second, 20*time.Millisecond, func() error {
		select {
		case <-r.done:
			return errors.New("testenv: redis-server exited at start; see " + r.opts.LogFile)
		default:
		}
		return c.Ping(context.Background()).Err()
	})
}

// Stop SIGKILLs the server and waits for it to exit; calling it twice is fine.
func (r *Redis) Stop() {
	if r.cmd != nil {
		_ = r.cmd.Process.Kill()
		<-r.done
		r.cmd = nil
	}
}

// Restart SIGKILLs the server and starts it again on the same port and
// directory.
func (r *Redis) Restart() error {
	r.Stop()
	return r.Start()
}

// PID is the process id of the running server (0 when stopped).
func (r *Redis) PID() int {
	if r.cmd == nil || r.cmd.Process == nil {
		return 0
	}
	return r.cmd.Process.Pid
}

// URL is the redis:// URL, the same across restarts.
func (r *Redis) URL() string { return "redis://" + r.Addr }
