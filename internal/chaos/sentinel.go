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
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/internal/testenv"
)

// redisNode is one redis-server process (data node or sentinel) on a fixed
// port, so a restarted primary comes back where Sentinel knows it.
type redisNode struct {
	addr string
	args []string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

func (n *redisNode) start() error {
	logf, err := os.OpenFile(n.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	cmd := exec.Command("redis-server", n.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("chaos: start redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	n.cmd, n.done = cmd, done
	c := redis.NewClient(&redis.Options{Addr: n.addr})
	defer c.Close()
	return testenv.Poll(30*time.Second, 20*time.Millisecond, func() error {
		select {
		case <-done:
			return fmt.Errorf("chaos: redis-server %s exited at start (log %s)", n.addr, n.log)
		default:
		}
		return c.Ping(context.Background()).Err()
	})
}

func (n *redisNode) kill() {
	if n.cmd != nil {
		_ = n.cmd.Process.Signal(syscall.SIGKILL)
		<-n.done
	}
}

// sentinelSet is two data nodes (a primary and its replica) and three
// sentinels watching them under the master name "toolgate".
type sentinelSet struct {
	data      []*redisNode // data[0] the first primary
	sentinels []*redisNode
	master    string
}

// startSentinelSet starts the set in dir: each data node durable
// (appendfsync always), sentinels that call a primary down after
// downAfter. It returns once the replica is in sync and every sentinel
// knows it.
func startSentinelSet(dir string, downAfter time.Duration) (*sentinelSet, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, fmt.Errorf("chaos: redis-server not found in PATH (apt-get install redis-server): %w", err)
	}
	s := &sentinelSet{master: "toolgate"}
	var primaryPort int
	for i, name := range []string{"redis-a", "redis-b"} {
		port, err := testenv.Port()
		if err != nil {
			return s, err
		}
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return s, fmt.Errorf("chaos: %w", err)
		}
		n := &redisNode{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), log: filepath.Join(dir, name+".log"),
			args: []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", d, "--save", "",
				"--appendonly", "yes", "--appendfsync", "always", "--replica-announce-ip", "127.0.0.1"}}
		if i == 0 {
			primaryPort = port
		} else {
			n.args = append(n.args, "--replicaof", "127.0.0.1", strconv.Itoa(primaryPort))
		}
		if err := n.start(); err != nil {
			return s, err
		}
		s.data = append(s.data, n)
	}
	if err := waitReplicaLink(s.data[1].addr, 30*time.Second); err != nil {
		return s, err
	}
	for i := range 3 {
		port, err := testenv.Port()
		if err != nil {
			return s, err
		}
		conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", i))
		ms := strconv.FormatInt(downAfter.Milliseconds(), 10)
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %d 2\n"+
			"sentinel down-after-milliseconds %[3]s %[5]s\nsentinel failover-timeout %[3]s 4000\nsentinel parallel-syncs %[3]s 1\n",
			port, dir, s.master, primaryPort, ms)
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			return s, fmt.Errorf("chaos: %w", err)
		}
		n := &redisNode{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), args: []string{conf, "--sentinel"},
			log: filepath.Join(dir, fmt.Sprintf("sentinel-%d.log", i))}
		if err := n.start(); err != nil {
			return s, err
		}
		s.sentinels = append(s.sentinels, n)
	}
	for _, sn := range s.sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: sn.addr})
		err := testenv.Poll(30*time.Second, 50*time.Millisecond, func() error {
			r, err := c.Replicas(context.Background(), s.master).Result()
			if err != nil || len(r) == 0 {
				return fmt.Errorf("chaos: sentinel %s does not know the replica yet (%v)", sn.addr, err)
			}
			return nil
		})
		c.Close()
		if err != nil {
			return s, err
		}
	}
	return s, nil
}

// URL is the redis-sentinel:// URL of the set: every claim waits for the
// replica when one is connected (wait_replicas=auto).
func (s *sentinelSet) URL() string {
	addrs := make([]string, len(s.sentinels))
	for i, sn := range s.sentinels {
		addrs[i] = sn.addr
	}
	return "redis-sentinel://" + strings.Join(addrs, ",") + "/" + s.master + "?wait_replicas=auto&wait_timeout=1s"
}

// primary is the address the sentinels' majority names as primary.
func (s *sentinelSet) primary(ctx context.Context) (string, error) {
	votes := map[string]int{}
	for _, sn := range s.sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: sn.addr, DialTimeout: time.Second, ReadTimeout: time.Second})
		r, err := c.GetMasterAddrByName(ctx, s.master).Result()
		c.Close()
		if err == nil && len(r) == 2 {
			votes[net.JoinHostPort(r[0], r[1])]++
		}
	}
	for a, n := range votes {
		if n >= 2 {
			return a, nil
		}
	}
	return "", errors.New("chaos: the sentinels agree on no primary")
}

// node is the data node at addr.
func (s *sentinelSet) node(addr string) *redisNode {
	for _, n := range s.data {
		if n.addr == addr {
			return n
		}
	}
	return nil
}

// restartAsReplica starts a killed data node again; the sentinels turn it
// into a replica of the primary they promoted.
func (s *sentinelSet) restartAsReplica(n *redisNode) error { return n.start() }

func (s *sentinelSet) stop() {
	for _, n := range append(append([]*redisNode{}, s.sentinels...), s.data...) {
		n.kill()
	}
}

func waitReplicaLink(addr string, total time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	return testenv.Poll(total, 20*time.Millisecond, func() error {
		info, err := c.Info(context.Background(), "replication").Result()
		if err != nil || !strings.Contains(info, "master_link_status:up") {
			return fmt.Errorf("chaos: replica %s not in sync (%v)", addr, err)
		}
		return nil
	})
}
