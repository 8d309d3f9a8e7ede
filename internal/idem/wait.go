package idem

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotReplicated: a write (claim or completion) was applied on the
// primary but no replica confirmed it within wait_timeout. The caller must
// treat it as transient: not call the tool after such a claim, not ack
// after such a completion. A failover now could lose the write.
var ErrNotReplicated = errors.New("idem: write not confirmed by a replica")

// waitConf: replicas is how many replicas must confirm each write (WAIT);
// -1 is auto: one when the primary reports connected replicas, else none.
type waitConf struct {
	replicas int
	timeout  time.Duration
}

// replicaCache remembers the primary's connected_slaves for a second so
// auto does not cost an INFO per write.
type replicaCache struct {
	mu   sync.Mutex
	n    int
	when time.Time
}

// waitFor is the number of replicas the next write must reach.
func (s *Redis) waitFor(ctx context.Context, key string) (int, error) {
	if s.wait.replicas >= 0 {
		return s.wait.replicas, nil
	}
	s.replicas.mu.Lock()
	defer s.replicas.mu.Unlock()
	if time.Since(s.replicas.when) < time.Second {
		return min(s.replicas.n, 1), nil
	}
	c, err := s.node(ctx, key)
	if err != nil {
		return 0, err
	}
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return 0, fmt.Errorf("idem: redis info replication: %w", err)
	}
	s.replicas.n = connectedReplicas(info)
	s.replicas.when = time.Now()
	return min(s.replicas.n, 1), nil
}

func connectedReplicas(info string) int {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_slaves:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// node is the client whose one connection carries a write and its WAIT:
// on a cluster the primary of key's slot, else the client itself.
func (s *Redis) node(ctx context.Context, key string) (redis.Cmdable, error) {
	if cc, ok := s.c.(*redis.ClusterClient); ok {
		n, err := cc.MasterForKey(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("idem: redis cluster: %w", err)
		}
		return n, nil
	}
	return s.c, nil
}

// runWrite runs a writing script; when replicas are wanted it sends WAIT
// on the same connection right behind it (a pipeline is one connection),
// and fails with ErrNotReplicated if fewer replicas confirmed.
func (s *Redis) runWrite(ctx context.Context, sc *redis.Script, keys []string, args ...any) (*redis.Cmd, error) {
	n, err := s.waitFor(ctx, keys[0])
	if err != nil {
		return nil, err
	}
	if n == 0 {
		cmd := sc.Run(ctx, s.c, keys, args...)
		return cmd, cmd.Err()
	}
	c, err := s.node(ctx, keys[0])
	if err != nil {
		return nil, err
	}
	pipe := c.Pipeline()
	cmd := sc.Eval(ctx, pipe, keys, args...)
	w := pipe.Do(ctx, "wait", n, s.wait.timeout.Milliseconds())
	if _, err := pipe.Exec(ctx); err != nil && cmd.Err() == nil && w.Err() == nil {
		return nil, err
	}
	if cmd.Err() != nil {
		return cmd, cmd.Err()
	}
	if w.Err() != nil {
		return nil, fmt.Errorf("idem: redis wait: %w", w.Err())
	}
	if got, _ := w.Int64(); got < int64(n) {
		return nil, fmt.Errorf("idem: %d of %d replicas within %s: %w", got, n, s.wait.timeout, ErrNotReplicated)
	}
	return cmd, nil
}
