package console

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestLimiter_attempts_at_once_never_exceed_the_budget(t *testing.T) {
	l, now := newLimiter(), time.Now()
	var (
		wg sync.WaitGroup
		mu sync.Mutex
		ok int
	)
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, allowed := l.take("192.0.2.1", now); allowed {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ok != loginBurst {
		t.Fatalf("%d of 100 simultaneous attempts allowed, want %d", ok, loginBurst)
	}
	if _, allowed := l.take("192.0.2.2", now); !allowed {
		t.Fatal("another address shares the first one's budget")
	}
}

func TestLimiter_remembers_a_bounded_number_of_addresses(t *testing.T) {
	l, now := newLimiter(), time.Now()
	for i := range maxClients + 50 {
		for range loginBurst {
			l.take("10.0."+strconv.Itoa(i/256)+"."+strconv.Itoa(i%256), now)
		}
	}
	if len(l.by) > maxClients+1 {
		t.Fatalf("%d addresses remembered, want at most %d (and the shared one)", len(l.by), maxClients)
	}
	if _, allowed := l.take("10.99.0.1", now); allowed {
		t.Fatal("a new address past the bound got a budget of its own while the shared one is spent")
	}
	if _, allowed := l.take("10.99.0.1", now.Add(10*loginEvery)); !allowed {
		t.Fatal("after a while the shared budget never came back")
	}
}
