package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/redis/go-redis/v9"
)

// natsServer is an embedded nats-server with JetStream on file storage, on a
// fixed port and store directory, so it can be shut down and started again
// with the same streams and consumers.
type natsServer struct {
	opts server.Options
	srv  *server.Server
}

func newNATS(dir string) (*natsServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	n := &natsServer{opts: server.Options{
		Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: filepath.Join(dir, "jetstream"),
		MaxPayload: 16 << 20, NoSigs: true, NoLog: true,
	}}
	return n, n.start()
}

func (n *natsServer) start() error {
	opts := n.opts // the server keeps a pointer to its options
	s, err := server.NewServer(&opts)
	if err != nil {
		return fmt.Errorf("chaos: nats-server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		return errors.New("chaos: nats-server did not accept connections within 30s")
	}
	n.srv = s
	return nil
}

// restart shuts the server down (a clean shutdown: its store is flushed)
// and starts it again on the same port and store.
func (n *natsServer) restart() error {
	n.stop()
	return n.start()
}

func (n *natsServer) stop() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
		n.srv = nil
	}
}

// URL is the client URL, the same across restarts.
func (n *natsServer) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.opts.Port) }

// redisServer is a redis-server process that persists every write before it
// answers (appendonly, appendfsync always), so a SIGKILL loses no
// acknowledged idempotency claim.
type redisServer struct {
	port int
	dir  string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

func newRedis(dir string) (*redisServer, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, fmt.Errorf("chaos: redis-server not found in PATH (apt-get install redis-server): %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &redisServer{port: port, dir: filepath.Join(dir, "redis"), log: filepath.Join(dir, "redis.log")}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	return r, r.start()
}

func (r *redisServer) start() error {
	r.cmd = exec.Command("redis-server", "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", r.dir, "--logfile", r.log)
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("chaos: start redis-server: %w", err)
	}
	r.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(r.cmd, r.done)
	c := redis.NewClient(&redis.Options{Addr: r.addr()})
	defer c.Close()
	return poll(30*time.Second, 20*time.Millisecond, func() error {
		select {
		case <-r.done:
			return errors.New("chaos: redis-server exited at start; see " + r.log)
		default:
		}
		return c.Ping(context.Background()).Err()
	})
}

// restart SIGKILLs redis-server and starts it again on the same port and
// directory; it reloads its append-only file.
func (r *redisServer) restart() error {
	r.stop()
	return r.start()
}

func (r *redisServer) stop() {
	if r.cmd != nil {
		_ = r.cmd.Process.Kill()
		<-r.done
		r.cmd = nil
	}
}

func (r *redisServer) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port)) }

// URL is the redis:// URL, the same across restarts.
func (r *redisServer) URL() string { return "redis://" + r.addr() }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("chaos: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// poll calls f every step until it returns nil or total has passed; then it
// returns f's last error.
func poll(total, step time.Duration, f func() error) error {
	deadline := time.Now().Add(total)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %w", total, err)
		}
		time.Sleep(step)
	}
}
