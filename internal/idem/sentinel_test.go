package idem

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/toolgate/toolgate/internal/testenv"
)

func claimRec(key, owner string) Record {
	return Record{Key: key, CallID: "call-" + key, Tool: "t", Fingerprint: Fingerprint("t", []byte(key)), Owner: owner, LeaseUntil: time.Now().Add(time.Minute), ClaimedAt: time.Now()}
}

func dialT(t *testing.T, url string) *Redis {
	t.Helper()
	s, err := Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A claim returns only once the replica holds it (WAIT), so a failover
// right after cannot lose it.
func TestRedis_sentinel_claim_is_on_the_replica_when_it_returns(t *testing.T) {
	set := testenv.RunSentinelSet(t)
	s := dialT(t, set.URL())
	ctx := context.Background()
	replica := redis.NewClient(&redis.Options{Addr: set.Replica.Addr})
	defer replica.Close()
	for i := range 20 {
		key := fmt.Sprintf("k%d", i)
		if _, claimed, err := s.Claim(ctx, claimRec(key, "o"), time.Hour); err != nil || !claimed {
			t.Fatalf("claim %s: claimed=%v err=%v", key, claimed, err)
		}
		for _, k := range s.scriptKeys(key, "call-"+key) {
			if n, err := replica.Exists(ctx, k).Result(); err != nil || n != 1 {
				t.Fatalf("replica lacks %s right after the claim returned (n=%d err=%v)", k, n, err)
			}
		}
	}
}

// A replica that does not confirm makes the claim a transient error, so
// the tool is not called on a write a failover could lose.
func TestRedis_sentinel_unconfirmed_claim_is_an_error(t *testing.T) {
	set := testenv.RunSentinelSet(t)
	s := dialT(t, set.URL()+"?wait_timeout=200ms")
	ctx := context.Background()
	if _, _, err := s.Claim(ctx, claimRec("warm", "o"), time.Hour); err != nil {
		t.Fatal(err)
	}
	set.Replica.Pause()
	defer set.Replica.Resume()
	_, _, err := s.Claim(ctx, claimRec("k", "o"), time.Hour)
	if !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("claim with a silent replica: err=%v, want ErrNotReplicated", err)
	}
	err = s.Complete(ctx, "warm", "o", true, []byte(`1`), "", time.Hour)
	if !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("complete with a silent replica: err=%v, want ErrNotReplicated", err)
	}
}

// pause is a worker's wait before it retries a transient error, as the
// execute stage's nak delay is, so six workers do not storm the dead
// primary's address and the sentinels with dials.
func pause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(20 * time.Millisecond):
	}
}

// Many workers execute keys (claim, call, complete) while the primary is
// SIGKILLed; the sentinels promote the replica and the store follows. No
// key runs twice: every acknowledged claim survived the failover.
func TestRedis_sentinel_failover_under_load_runs_no_key_twice(t *testing.T) {
	set := testenv.RunSentinelSet(t)
	s := dialT(t, set.URL()+"?wait_timeout=500ms")
	// The budget is for the sentinels, not the store: on a loaded machine a
	// sentinel whose timer runs late enters TILT and acts on nothing for
	// 30 s.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const keys, workers = 300, 6
	var runs [keys]atomic.Int32
	var settled atomic.Int32
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Every worker tries every key, as redeliveries to replicas would.
			for i := range keys {
				key := fmt.Sprintf("k%d", (i+w*keys/workers)%keys)
				owner := fmt.Sprintf("w%d-%d", w, i)
				for ctx.Err() == nil {
					_, claimed, err := s.Claim(ctx, claimRec(key, owner), time.Hour)
					if err != nil {
						pause(ctx) // transient: the tool is not called
						continue
					}
					if claimed {
						runs[(i+w*keys/workers)%keys].Add(1)
						// As the execute gate: retry until the completion
						// lands, and stop at ErrNotOwner — an earlier try
						// landed and only its confirmation was lost (WAIT
						// timed out, or the primary died before the reply).
						for ctx.Err() == nil {
							err := s.Complete(ctx, key, owner, true, []byte(`1`), "", time.Hour)
							if err == nil || errors.Is(err, ErrNotOwner) {
								break
							}
							pause(ctx)
						}
					}
					settled.Add(1)
					break
				}
			}
		}()
	}
	testenv.Eventually(t, time.Minute, 20*time.Millisecond, func() error {
		if settled.Load() < keys {
			return fmt.Errorf("%d settled", settled.Load())
		}
		return nil
	})
	set.Primary.Kill()
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("workers did not finish across the failover: %v", ctx.Err())
	}
	if got := settled.Load(); got != keys*workers {
		t.Fatalf("settled %d of %d", got, keys*workers)
	}
	for i := range runs {
		if n := runs[i].Load(); n > 1 {
			t.Errorf("key k%d executed %d times", i, n)
		}
	}
	info, err := s.Client().Info(ctx, "replication").Result()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after failover the store talks to: %.40q", info)
}

// A completion the primary applied but no replica confirmed in time comes
// back ErrNotReplicated; trying it again finds the record completed and
// says ErrNotOwner. A retry loop must stop there (the execute gate does):
// the failover test's workers once retried on it until their deadline.
func TestRedis_sentinel_a_completion_retried_after_an_unconfirmed_one_is_not_owned(t *testing.T) {
	set := testenv.RunSentinelSet(t)
	s := dialT(t, set.URL()+"?wait_timeout=200ms")
	ctx := context.Background()
	if _, claimed, err := s.Claim(ctx, claimRec("k", "o"), time.Hour); err != nil || !claimed {
		t.Fatalf("claim: claimed=%v err=%v", claimed, err)
	}
	set.Replica.Pause()
	err := s.Complete(ctx, "k", "o", true, []byte(`1`), "", time.Hour)
	set.Replica.Resume()
	if !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("complete with a silent replica: %v, want ErrNotReplicated", err)
	}
	if err := s.Complete(ctx, "k", "o", true, []byte(`1`), "", time.Hour); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("the retry: %v, want ErrNotOwner (the first completion landed)", err)
	}
	rec, ok, err := s.Get(ctx, "k")
	if err != nil || !ok || rec.State != Completed {
		t.Fatalf("record %+v ok=%v err=%v, want completed", rec, ok, err)
	}
}
