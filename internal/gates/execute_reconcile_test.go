package gates

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
)

func TestExecute_garbage_idempotency_record_ends_outcome_unknown_and_never_runs(t *testing.T) {
	rds := testenv.RunRedis(t)
	c := redis.NewClient(&redis.Options{Addr: rds.Addr})
	t.Cleanup(func() { c.Close() })
	ex := &countingExec{}
	x := newExecute(t, idem.NewRedis(c), ex, execTools{"get_weather": compiled(t, tool.Definition{Name: "get_weather"})})
	ctx := context.Background()
	for i, stored := range []string{
		`garbage`, // on the previous main: a transient error on every delivery
		`{"state":"completed","ok":true,"result":{"forged":true}}`, // on the previous main: returned as the tool's answer
	} {
		e := approved("rgi", i, "get_weather", `{"city":"Paris"}`)
		key := idem.Key(e.CallID, e.ToolName, e.Arguments)
		if err := c.Set(ctx, "toolgate:idem:"+key, stored, 0).Err(); err != nil {
			t.Fatal(err)
		}
		for range 2 { // a redelivery meets the same record and the same end
			out, err := x.Handle(ctx, e)
			if err != nil || len(out) != 1 || out[0].Status != call.OutcomeUnknown {
				t.Fatalf("record %q: %v %v, want outcome_unknown", stored, out, err)
			}
			if why := strings.Join(out[0].Errors, " "); !strings.Contains(why, "cannot be read") || !strings.Contains(why, key) {
				t.Fatalf("reason %q does not say the record is unreadable and name the key", why)
			}
			if len(out[0].Result) != 0 {
				t.Fatalf("a forged result %s was returned", out[0].Result)
			}
		}
	}
	if n := ex.runs.Load(); n != 0 {
		t.Fatalf("the tool ran %d times", n)
	}
}
