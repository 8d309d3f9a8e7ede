package limit

import (
	"strings"
	"testing"
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
