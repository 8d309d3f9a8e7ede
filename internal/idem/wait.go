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
// -1 is auto (autoWant).
type waitConf struct {
	replicas int
	timeout  time.Duration
}

// replicaCache remembers what auto decided for a second so it does not
// cost an INFO per write, and the replication id of the primary last seen
// with a replica.
type replicaCache struct {
	mu   sync.Mutex
	want int
	when time.Time
	had  string // master_replid of the primary when it last had a replica
}

// waitFor is the number of replicas the next write must reach.
func (s *Redis) waitFor(ctx context.Context, key string) (int, error) {
	if s.wait.replicas >= 0 {
		return s.wait.replicas, nil
	}
	s.replicas.mu.Lock()
	defer s.replicas.mu.Unlock()
	if time.Since(s.replicas.when) < time.Second {
		return s.replicas.want, nil
	}
	c, err := s.node(ctx, key)
	if err != nil {
		return 0, err
	}
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return 0, fmt.Errorf("idem: redis info replication: %w", err)
	}
	s.replicas.want, s.replicas.had = autoWant(info, s.replicas.had)
	s.replicas.when = time.Now()
	return s.replicas.want, nil
}

// autoWant is what auto waits for, given the primary's INFO replication
// and the replication id of the primary last seen with a replica (had):
// one replica when it has one connected, and still one when this same
// primary had a replica and has lost it (a replica cut off by a partition
// is the one Sentinel may promote, so a claim it does not hold could be
// forgotten); none for a primary that never had one since it became
// primary (a new replication id: after a failover or a restart).
func autoWant(info, had string) (want int, nowHad string) {
	n, id := infoField(info, "connected_slaves"), infoField(info, "master_replid")
	switch replicas, _ := strconv.Atoi(n); {
	case replicas > 0:
		return 1, id
	case id != "" && id == had:
		return 1, had
	}
	return 0, had
}

func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
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
