package worker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

func TestWorker_observe_is_told_of_every_handler_run_with_its_error(t *testing.T) {
	r := newRig(t, 5*time.Second, 5)
	var mu sync.Mutex
	seen := map[string]int{}
	cfg := Config{Observe: func(stage string, d time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		seen[fmt.Sprintf("%s:%v", stage, err != nil)]++
		if d < 0 {
			t.Errorf("negative duration %v", d)
		}
	}}
	start(t, r, cfg, func(ctx context.Context, m Msg) ([]Output, error) {
		if string(m.Data) == "bad" {
			return nil, Permanent("bad", fmt.Errorf("bad input"))
		}
		return echo(ctx, m)
	})
	for _, d := range []string{"a", "b", "bad"} {
		r.publish(t, "in.x", d)
	}
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if seen["stage:false"] != 2 || seen["stage:true"] != 1 {
			return fmt.Errorf("observed %v, want 2 ok and 1 error", seen)
		}
		return nil
	})
}
