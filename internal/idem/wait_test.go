package idem

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/internal/testenv"
)

func TestAutoWant(t *testing.T) {
	info := func(replicas int, id string) string {
		return fmt.Sprintf("# Replication\r\nrole:master\r\nconnected_slaves:%d\r\nmaster_replid:%s\r\nmaster_repl_offset:12\r\n", replicas, id)
	}
	for _, test := range []struct {
		name, info, had string
		want            int
		nowHad          string
	}{
		{"a replica connected", info(2, "aaa"), "", 1, "aaa"},
		{"never had one", info(0, "aaa"), "", 0, ""},
		{"lost its replica", info(0, "aaa"), "aaa", 1, "aaa"},
		{"a new primary without one (failover, restart)", info(0, "bbb"), "aaa", 0, "aaa"},
		{"a new primary with one", info(1, "bbb"), "aaa", 1, "bbb"},
		{"no INFO fields", "garbage", "aaa", 0, "aaa"},
	} {
		want, had := autoWant(test.info, test.had)
		if want != test.want || had != test.nowHad {
			t.Errorf("%s: (%d, %q), want (%d, %q)", test.name, want, had, test.want, test.nowHad)
		}
	}
}

// The replica goes away while the primary stays: from the primary's side a
// crashed replica and one cut off by a partition look alike, and the cut-off
// one is what Sentinel promotes. auto must keep waiting for it, so no claim
// is acknowledged that only the old primary holds. Before, auto stopped
// waiting once connected_slaves read 0, and the claim was taken.
func TestRedis_auto_keeps_waiting_when_the_primary_loses_its_replica(t *testing.T) {
	set := testenv.RunSentinelSet(t)
	s := dialT(t, set.URL()+"?wait_timeout=200ms")
	ctx := context.Background()
	if _, claimed, err := s.Claim(ctx, claimRec("before", "o"), time.Hour); err != nil || !claimed {
		t.Fatalf("claim with the replica: claimed=%v err=%v", claimed, err)
	}
	set.Replica.Kill()
	primary := redis.NewClient(&redis.Options{Addr: set.Primary.Addr})
	defer primary.Close()
	testenv.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		info, err := primary.Info(ctx, "replication").Result()
		if err != nil || !strings.Contains(info, "connected_slaves:0") {
			return fmt.Errorf("primary still reports its replica (%v)", err)
		}
		return nil
	})
	s.replicas.mu.Lock()
	s.replicas.when = time.Time{} // read INFO again now, not after the cached second
	s.replicas.mu.Unlock()
	_, claimed, err := s.Claim(ctx, claimRec("after", "o"), time.Hour)
	if !errors.Is(err, ErrNotReplicated) || claimed {
		t.Fatalf("claim with the replica gone: claimed=%v err=%v, want ErrNotReplicated", claimed, err)
	}
}
