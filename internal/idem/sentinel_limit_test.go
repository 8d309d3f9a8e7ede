package idem

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

// Issue 33 under a Redis Sentinel failover (wait_replicas=auto): workers
// claim 1,000 calls against a count limit of 100, each call tried by two
// workers (a redelivery, a second replica), and the primary is SIGKILLed
// once 40 calls have been charged and run. The sentinels promote the
// replica. No charge a call used is lost: after the failover the limit's
// usage counts at least every call that ran, never more than 100 ran, and
// none ran twice. (A claim whose confirmation was lost may leave a charge
// with no run: stricter, never looser.)
func TestRedis_sentinel_failover_mid_burst_loses_no_charge_a_call_used(t *testing.T) {
	set := testenv.RunSentinelSet(t)
	s := dialT(t, set.URL()+"?wait_replicas=auto&wait_timeout=500ms")
	// As the failover test above: the budget is for the sentinels (TILT on
	// a loaded machine), not the store.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const calls, max, killAt, workers = 1000, 100, 40, 6
	c := charge("burst", "acme", 1, max)
	var runs [calls]atomic.Int32
	var ran, settled atomic.Int32
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				if i%(workers/2) != w%(workers/2) { // each call: two workers
					continue
				}
				id := fmt.Sprintf("burst-%d", i)
				owner := fmt.Sprintf("w%d", w)
				for ctx.Err() == nil {
					rec := underLimits(id, c)
					rec.Owner = owner
					_, claimed, err := s.Claim(ctx, rec, time.Hour)
					if _, over := AsLimit(err); over {
						break // limit_exceeded: nothing charged, nothing runs
					}
					if err != nil {
						pause(ctx) // transient: redelivered, the tool is not called
						continue
					}
					if claimed {
						runs[i].Add(1)
						ran.Add(1)
						for ctx.Err() == nil {
							err := s.Complete(ctx, rec.Key, owner, true, []byte(`1`), "", time.Hour)
							if err == nil || errors.Is(err, ErrNotOwner) {
								break
							}
							pause(ctx)
						}
					}
					break
				}
				settled.Add(1)
			}
		}()
	}
	testenv.Eventually(t, time.Minute, 5*time.Millisecond, func() error {
		if n := ran.Load(); n < killAt {
			return fmt.Errorf("%d calls ran", n)
		}
		return nil
	})
	set.Primary.Kill()
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("workers did not finish across the failover: %v", ctx.Err())
	}
	if got := settled.Load(); got != calls*2 {
		t.Fatalf("settled %d of %d attempts", got, calls*2)
	}
	for i := range runs {
		if n := runs[i].Load(); n > 1 {
			t.Errorf("call burst-%d ran %d times", i, n)
		}
	}
	used := usage(t, s, c)
	t.Logf("%d calls ran, %d charges in the limit after the failover", ran.Load(), used)
	if n := int64(ran.Load()); n > max || used < n || used > max {
		t.Fatalf("%d calls ran and the limit holds %d charges after the failover; want runs ≤ charges ≤ %d", n, used, max)
	}
	info, err := s.Client().Info(ctx, "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(set.Replica.Addr)
	if want := "tcp_port:" + port; !strings.Contains(info, want) {
		t.Fatalf("the store does not talk to the promoted replica (%s) after the failover", want)
	}
}
