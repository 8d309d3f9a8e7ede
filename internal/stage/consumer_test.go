package stage

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// TestStage_ack_wait_comes_from_the_consumer_on_the_server: an admin applied
// the topology with a 7s AckWait; a stage configured with 30s hands its
// handlers the 7s its inputs are really redelivered after.
func TestStage_ack_wait_comes_from_the_consumer_on_the_server(t *testing.T) {
	s := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, s)
	ctx := context.Background()
	applied := streams.DefaultSettings()
	applied.AckWait = 7 * time.Second
	if err := streams.Ensure(ctx, js, applied); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{streams.Execute, streams.Repair, streams.Accumulate} {
		d, err := withConsumer(ctx, Deps{JS: js, Settings: streams.DefaultSettings()}, st)
		if err != nil {
			t.Fatal(err)
		}
		if d.Settings.AckWait != 7*time.Second {
			t.Errorf("%s: AckWait %v, want the consumer's 7s", st, d.Settings.AckWait)
		}
		if got := repairBudget(d.Settings); got != 7*time.Second-7*time.Second/5 {
			t.Errorf("%s: repair budget %v", st, got)
		}
	}
	if _, err := withConsumer(ctx, Deps{JS: js}, "nope"); err == nil {
		t.Error("a missing consumer is not an error")
	}
}
