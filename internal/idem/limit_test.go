package idem

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/limit"
	"github.com/toolgate/toolgate/internal/testenv"
)

func charge(name, key string, weight, max int64) limit.Charge {
	return limit.Charge{Limit: name, Key: key, Weight: weight, Window: time.Hour, Max: max, MaxKeys: limit.DefaultMaxKeys}
}

func underLimits(callID string, cs ...limit.Charge) Record {
	r := record(callID, `{"a":1}`, "owner-a", time.Minute)
	r.Charges = cs
	return r
}

func usage(t *testing.T, s Store, c limit.Charge) int64 {
	t.Helper()
	u, err := s.(Limits).LimitUsage(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return u.Used + u.Overflow
}

// 1,000 claims at once against a limit of 100: exactly 100 are claimed,
// 900 refused; claiming a claimed call again charges nothing.
func TestStore_limit_is_exact_under_concurrent_claims(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) { exactUnderConcurrentClaims(t, open(t)) })
	}
}

// On a cluster, a compare-and-set that meets another write of the same
// key still being replicated is refused with "wrong last sequence" in its
// constant form (10164), not the per-subject one (10071): a conflict all
// the same, asked again, never an error that fails the claim. Without that
// a charge raced by another execute goroutine failed its call's attempt,
// and the deploy cluster test saw a call wait out its retries.
func TestKV_limit_is_exact_on_a_three_node_cluster(t *testing.T) {
	servers := testenv.RunJetStreamCluster(t)
	_, js := testenv.Connect(t, servers[0])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var kv jetstream.KeyValue
	testenv.Eventually(t, 30*time.Second, 200*time.Millisecond, func() (err error) {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "idem", TTL: time.Hour, Replicas: 3})
		return err
	})
	exactUnderConcurrentClaims(t, NewKV(kv))
}

func exactUnderConcurrentClaims(t *testing.T, s Store) {
	ctx := context.Background()
	{
		{
			c := charge("burst", "acme", 1, 100)
			var claimed, refused, other atomic.Int64
			var wg sync.WaitGroup
			sem := make(chan struct{}, 64)
			for i := range 1000 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sem <- struct{}{}
					defer func() { <-sem }()
					_, ok, err := s.Claim(ctx, underLimits(fmt.Sprintf("burst-%d", i), c), time.Hour)
					_, isLimit := AsLimit(err)
					switch {
					case ok && err == nil:
						claimed.Add(1)
					case isLimit:
						refused.Add(1)
					default:
						other.Add(1)
						t.Errorf("claim %d: %v", i, err)
					}
				}()
			}
			wg.Wait()
			if claimed.Load() != 100 || refused.Load() != 900 || other.Load() != 0 {
				t.Fatalf("claimed %d, refused %d, other %d; want 100, 900, 0", claimed.Load(), refused.Load(), other.Load())
			}
			if u := usage(t, s, c); u != 100 {
				t.Fatalf("usage %d, want 100", u)
			}
			// a redelivery of a claimed call: its record exists, nothing is charged
			for range 3 {
				if _, ok, err := s.Claim(ctx, underLimits("burst-0", c), time.Hour); ok || err != nil {
					if _, isLimit := AsLimit(err); !isLimit {
						// burst-0 may have been refused: then it is refused again, still uncharged
						t.Fatalf("again: claimed=%v err=%v", ok, err)
					}
				}
			}
			if u := usage(t, s, c); u != 100 {
				t.Fatalf("usage after redeliveries %d, want 100", u)
			}
		}
	}
}

func TestStore_limit_release_gives_the_charge_back(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			c := charge("one", "acme", 1, 1)
			a := underLimits("rel-a", c)
			if _, ok, err := s.Claim(ctx, a, time.Hour); !ok || err != nil {
				t.Fatalf("claim: %v %v", ok, err)
			}
			_, _, err := s.Claim(ctx, underLimits("rel-b", c), time.Hour)
			le, ok := AsLimit(err)
			if !ok || le.Limit != "one" || le.PassAt.Before(time.Now().Add(59*time.Minute)) {
				t.Fatalf("second call: %v, want limit one full for an hour", err)
			}
			if err := s.Release(ctx, a.Key, "owner-a"); err != nil {
				t.Fatal(err)
			}
			if u := usage(t, s, c); u != 0 {
				t.Fatalf("usage after release %d, want 0", u)
			}
			if _, ok, err := s.Claim(ctx, underLimits("rel-b", c), time.Hour); !ok || err != nil {
				t.Fatalf("after release: %v %v", ok, err)
			}
		})
	}
}

func TestStore_limit_weights_and_all_or_none(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			budget := func(w int64) limit.Charge { return charge("budget", "acme", w, 1000) }
			calls := charge("calls", "acme", 1, 10)
			for i := range 3 {
				if _, ok, err := s.Claim(ctx, underLimits(fmt.Sprintf("w-%d", i), budget(300), calls), time.Hour); !ok || err != nil {
					t.Fatalf("call %d: %v %v", i, ok, err)
				}
			}
			_, _, err := s.Claim(ctx, underLimits("w-3", budget(300), calls), time.Hour)
			if le, ok := AsLimit(err); !ok || le.Limit != "budget" || le.Used != 900 || le.PassAt.IsZero() {
				t.Fatalf("fourth: %v, want budget 900 of 1000", err)
			}
			if u := usage(t, s, calls); u != 3 {
				t.Fatalf("calls used %d, want 3: a refused call charges no limit", u)
			}
			if _, ok, err := s.Claim(ctx, underLimits("w-4", budget(100), calls), time.Hour); !ok || err != nil {
				t.Fatalf("a call that fits: %v %v", ok, err)
			}
			_, _, err = s.Claim(ctx, underLimits("w-5", budget(5000), calls), time.Hour)
			if le, ok := AsLimit(err); !ok || !le.PassAt.IsZero() {
				t.Fatalf("a weight over the maximum never passes: %v", err)
			}
		})
	}
}

// Past max_keys the least recently charged key's charges move to the
// overflow every key is also checked against: evicting a key never lets it
// (or any other) use more.
func TestRedis_limit_key_eviction_only_makes_the_limit_stricter(t *testing.T) {
	ctx := context.Background()
	s := stores(t)["redis"](t)
	c := func(key string) limit.Charge {
		ch := charge("per_customer", key, 1, 1)
		ch.MaxKeys = 2
		return ch
	}
	for _, k := range []string{"a", "b", "c"} { // c evicts a
		if _, ok, err := s.Claim(ctx, underLimits("ev-"+k, c(k)), time.Hour); !ok || err != nil {
			t.Fatalf("key %s: %v %v", k, ok, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	for _, k := range []string{"a", "d"} {
		if _, _, err := s.Claim(ctx, underLimits("ev-again-"+k, c(k)), time.Hour); err == nil {
			t.Fatalf("key %s ran after eviction: the limit got looser", k)
		}
	}
	u, err := s.(Limits).LimitUsage(ctx, c("a"))
	if err != nil || u.Overflow != 1 || u.Keys != 2 {
		t.Fatalf("usage %+v %v: want a's charge in the overflow and 2 keys", u, err)
	}
}
