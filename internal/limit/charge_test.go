package limit

import (
	"strings"
	"testing"
	"time"
)

func compile(t *testing.T, l Limit) *Compiled {
	t.Helper()
	lc, err := NewCompiler()
	if err != nil {
		t.Fatal(err)
	}
	c, err := lc.Compile(l)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCharge_key_and_weight_from_the_call(t *testing.T) {
	c := compile(t, Limit{Name: "budget", Key: `tenant + ":" + args.customer_id`, Window: "24h", Weight: "args.amount_cents", Max: 50000})
	ch, err := c.Charge(Input{Tenant: "acme", Args: map[string]any{"customer_id": "c1", "amount_cents": float64(1200)}})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Key != "acme:c1" || ch.Weight != 1200 || ch.Max != 50000 || ch.MaxKeys != DefaultMaxKeys {
		t.Fatalf("charge %+v", ch)
	}
	if _, err := c.Charge(Input{Tenant: "acme", Args: map[string]any{"customer_id": "c1", "amount_cents": float64(-1)}}); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Fatalf("a negative weight must refuse the call, got %v", err)
	}
	if _, err := c.Charge(Input{Tenant: "acme", Args: map[string]any{"amount_cents": float64(1)}}); err == nil {
		t.Fatal("a key that cannot be evaluated must refuse the call")
	}
}

func TestCharge_a_long_hostile_key_is_kept_as_its_hash(t *testing.T) {
	c := compile(t, Limit{Name: "per_customer", Key: "args.customer_id", Window: "1h", Count: 5})
	long := strings.Repeat("x", 10_000)
	ch, err := c.Charge(Input{Args: map[string]any{"customer_id": long}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ch.Key, "sha256:") || len(ch.Key) != len("sha256:")+64 {
		t.Fatalf("key %q", ch.Key)
	}
	other, _ := c.Charge(Input{Args: map[string]any{"customer_id": long + "y"}})
	if other.Key == ch.Key {
		t.Fatal("two long keys share a hash")
	}
	short, _ := c.Charge(Input{Args: map[string]any{"customer_id": "c1"}})
	if short.Key != "c1" || short.Weight != 1 {
		t.Fatalf("short key %+v", short)
	}
}

func TestMeter_charges_as_the_store_does(t *testing.T) {
	count := compile(t, Limit{Name: "per_tenant", Window: "1h", Count: 2})
	weight := compile(t, Limit{Name: "cents", Window: "1h", Weight: "args.amount", Max: 1000, OnExceed: Wait, MaxWait: "10m"})
	charge := func(c *Compiled, args map[string]any) Charge {
		ch, err := c.Charge(Input{Tenant: "acme", Args: args})
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	m := NewMeter()
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	one := []Charge{charge(count, nil)}
	for i, want := range []string{"", "", "per_tenant"} {
		got := ""
		if ex := m.Charge(t0.Add(time.Duration(i)*time.Minute), one, nil); ex != nil {
			got = ex.Limit
			if !strings.Contains(ex.Message, "2 of 2 per 1h0m0s used; this call fits from 2026-12-06T11:00:00Z") {
				t.Errorf("message %q", ex.Message)
			}
		}
		if got != want {
			t.Fatalf("call %d: exceeded %q, want %q", i, got, want)
		}
	}
	// The window slides: the first charge leaves it after an hour.
	if ex := m.Charge(t0.Add(time.Hour+time.Second), one, nil); ex != nil {
		t.Fatalf("an hour later: %v", ex)
	}
	// All or none: a call over one of its limits charges neither.
	both := func(amount float64) []Charge {
		return []Charge{charge(weight, map[string]any{"amount": amount}), charge(count, nil)}
	}
	if ex := m.Charge(t0.Add(time.Hour+2*time.Second), both(10), nil); ex == nil || ex.Limit != "per_tenant" {
		t.Fatalf("over per_tenant: %v", ex)
	}
	t1 := t0.Add(3 * time.Hour)
	if ex := m.Charge(t1, both(600), nil); ex != nil {
		t.Fatalf("600 of 1000 and 1 of 2: %v", ex)
	}
	wait := map[string]time.Duration{"cents": 10 * time.Minute}
	// 600 + 600 > 1000: with wait it fits when the first leaves, an hour
	// on — past max_wait, so it is refused; a call over max alone never fits.
	if ex := m.Charge(t1.Add(time.Minute), []Charge{charge(weight, map[string]any{"amount": 600.0})}, wait); ex == nil || ex.Limit != "cents" {
		t.Fatalf("held past max_wait: %v", ex)
	}
	if ex := m.Charge(t1, []Charge{charge(weight, map[string]any{"amount": 5000.0})}, wait); ex == nil || !strings.Contains(ex.Message, "never fit") {
		t.Fatalf("over max alone: %v", ex)
	}
	// Within max_wait it is held, then charged: the next one finds it.
	if ex := m.Charge(t1.Add(time.Hour-5*time.Minute), []Charge{charge(weight, map[string]any{"amount": 600.0})}, wait); ex != nil {
		t.Fatalf("held within max_wait: %v", ex)
	}
	if ex := m.Charge(t1.Add(time.Hour-4*time.Minute), []Charge{charge(weight, map[string]any{"amount": 500.0})}, nil); ex == nil {
		t.Fatal("the held call's charge is not counted")
	}
}
