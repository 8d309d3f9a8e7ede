package pipeline

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
)

// A repaired call re-enters parse as the same call id; its hops must not
// carry the message ids of the first round, or JetStream's de-duplication
// would drop them and the repaired call would never be judged.
func TestOutputs_repaired_call_hops_do_not_collide_with_the_first_round(t *testing.T) {
	first := call.New("resp-ids", 0, time.Unix(0, 0))
	first.Status = call.Parsed
	again := first
	again.RepairAttempts = 1
	for _, stage := range []string{"parse", "validate", "business", "policy"} {
		a, err := (*Emitter)(nil).Outputs(stage, first)
		if err != nil {
			t.Fatal(err)
		}
		b, err := (*Emitter)(nil).Outputs(stage, again)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, o := range a {
			if o.MsgID != "" {
				ids[o.MsgID] = true
			}
		}
		for _, o := range b {
			if o.MsgID != "" && ids[o.MsgID] {
				t.Fatalf("%s: message id %s is used by both rounds", stage, o.MsgID)
			}
		}
		if len(ids) == 0 {
			t.Fatalf("%s: no message id to compare", stage)
		}
	}
}
