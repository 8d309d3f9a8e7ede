package gates

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/tool"
)

// BenchmarkExecute_claim_run_complete is the execute gate's own work for one
// new call against a real redis-server: claim, run a no-op executor,
// complete. The Redis round trips dominate.
func BenchmarkExecute_claim_run_complete(b *testing.B) {
	store := redisStore(b)
	x := &Execute{
		Tools: execTools{"charge": compiled(b, tool.Definition{Name: "charge"})}, Store: store, Owner: "bench", Now: time.Now, Seals: testSeals,
		Executors: func(*tool.Compiled) execute.Executor { return &plainExec{} },
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		out, err := x.Handle(context.Background(), approved(fmt.Sprintf("bench-%d", i), 0, "charge", `{"amount":5}`))
		if err != nil || len(out) != 1 {
			b.Fatal(out, err)
		}
	}
}
