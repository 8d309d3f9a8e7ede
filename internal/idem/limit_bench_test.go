package idem

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/internal/limit"
	"github.com/toolgate/toolgate/internal/testenv"
)

// BenchmarkRedisClaim_limits measures one claim on a real redis-server: no
// limit (the claim script as it always was), one count limit, and a count
// and a weight limit (one script, one round trip either way).
func BenchmarkRedisClaim_limits(b *testing.B) {
	for _, c := range []struct {
		name    string
		charges []limit.Charge
	}{
		{"none", nil},
		{"count", []limit.Charge{charge("calls", "acme", 1, 1<<40)}},
		{"count_weight", []limit.Charge{charge("calls", "acme", 1, 1<<40), charge("budget", "acme", 4900, 1<<49)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := testenv.RunRedis(b)
			cl := redis.NewClient(&redis.Options{Addr: r.Addr})
			defer cl.Close()
			st := NewRedis(cl)
			ctx := context.Background()
			i := 0
			for b.Loop() {
				rec := record(fmt.Sprintf("bench-%d", i), `{"a":1}`, "o", time.Minute)
				rec.Charges = c.charges
				if _, ok, err := st.Claim(ctx, rec, time.Hour); !ok || err != nil {
					b.Fatal(ok, err)
				}
				i++
			}
		})
	}
}
