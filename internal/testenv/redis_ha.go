package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisProc is a redis-server (or sentinel) process with arguments of its own.
type RedisProc struct {
	Addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// startProc starts redis-server with args on a free port, kills it in
// cleanup, and returns once PING answers.
func startProc(t testing.TB, port int, args ...string) *RedisProc {
	t.Helper()
	p := &RedisProc{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), done: make(chan struct{})}
	p.cmd = exec.Command("redis-server", args...)
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("testenv: start redis-server: %v", err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(p.Kill)
	c := redis.NewClient(&redis.Options{Addr: p.Addr})
	defer c.Close()
	err := Poll(30*time.Second, 20*time.Millisecond, func() error {
		select {
		case <-p.done:
			return errors.New("testenv: redis-server exited at start")
		default:
		}
		return c.Ping(context.Background()).Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Kill SIGKILLs the process and waits for it; twice is fine.
func (p *RedisProc) Kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// SentinelSet is a primary, one replica and three sentinels watching them
// under the master name "mymaster", with a quick failover (down after
// 300ms).
type SentinelSet struct {
	Primary, Replica *RedisProc
	Sentinels        []*RedisProc
	Master           string
}

// RunSentinelSet starts the set and returns once the replica is in sync and
// every sentinel knows the replica.
func RunSentinelSet(t testing.TB) *SentinelSet {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("testenv: redis-server not found in PATH (apt-get install redis-server): %v", err)
	}
	dir := t.TempDir()
	data := func(name string) []string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return []string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", d}
	}
	pp, rp := FreePort(t), FreePort(t)
	s := &SentinelSet{Master: "mymaster"}
	s.Primary = startProc(t, pp, append([]string{"--port", strconv.Itoa(pp)}, data("primary")...)...)
	s.Replica = startProc(t, rp, append([]string{"--port", strconv.Itoa(rp), "--replicaof", "127.0.0.1", strconv.Itoa(pp)}, data("replica")...)...)
	waitLink(t, s.Replica.Addr)
	for i := range 3 {
		sp := FreePort(t)
		conf := filepath.Join(dir, fmt.Sprintf("sentinel%d.conf", i))
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %d 2\n"+
			"sentinel down-after-milliseconds %[3]s 300\nsentinel failover-timeout %[3]s 2000\nsentinel parallel-syncs %[3]s 1\n",
			sp, dir, s.Master, pp)
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s.Sentinels = append(s.Sentinels, startProc(t, sp, conf, "--sentinel"))
	}
	for _, sn := range s.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr})
		err := Poll(30*time.Second, 50*time.Millisecond, func() error {
			r, err := c.Replicas(context.Background(), s.Master).Result()
			if err != nil || len(r) == 0 {
				return fmt.Errorf("sentinel %s does not know the replica yet (%v)", sn.Addr, err)
			}
			return nil
		})
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// waitLink waits until the replica at addr reports master_link_status:up.
func waitLink(t testing.TB, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	err := Poll(30*time.Second, 20*time.Millisecond, func() error {
		info, err := c.Info(context.Background(), "replication").Result()
		if err != nil || !strings.Contains(info, "master_link_status:up") {
			return fmt.Errorf("replica %s not in sync (%v)", addr, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// URL is the redis-sentinel:// URL of the set.
func (s *SentinelSet) URL() string {
	addrs := make([]string, len(s.Sentinels))
	for i, sn := range s.Sentinels {
		addrs[i] = sn.Addr
	}
	return "redis-sentinel://" + strings.Join(addrs, ",") + "/" + s.Master
}

// Pause stops the process (SIGSTOP): its connections stay open, it answers
// nothing. Resume continues it.
func (p *RedisProc) Pause() { _ = p.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused process (SIGCONT).
func (p *RedisProc) Resume() { _ = p.cmd.Process.Signal(syscall.SIGCONT) }

// RunCluster starts a three-primary Redis Cluster (no replicas), creates it
// with redis-cli --cluster create, and returns the node addresses once the
// cluster state is ok.
func RunCluster(t testing.TB) []string {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Fatalf("testenv: redis-cli not found in PATH (apt-get install redis-tools): %v", err)
	}
	dir := t.TempDir()
	var addrs []string
	for i := range 3 {
		p := FreePort(t)
		d := filepath.Join(dir, strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		n := startProc(t, p, "--port", strconv.Itoa(p), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--dir", d, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(d, "nodes.conf"), "--cluster-node-timeout", "2000")
		addrs = append(addrs, n.Addr)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	out, err := exec.Command("redis-cli", append(args, "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		t.Fatalf("testenv: redis-cli --cluster create: %v\n%s", err, out)
	}
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		err := Poll(30*time.Second, 50*time.Millisecond, func() error {
			info, err := c.ClusterInfo(context.Background()).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				return fmt.Errorf("cluster node %s not ok yet (%v)", a, err)
			}
			return nil
		})
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return addrs
}
