package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/internal/testenv"
)

// ReplayCheck is what replaying every dead letter did: a real replay
// (internal/dlq, as `toolgate dlq replay` does), whose outcomes are awaited and
// whose effect on the executor is checked.
type ReplayCheck struct {
	Letters, Replayed, Skipped, Pending int
	Outcomes                            map[string]int
	NewlyExecuted                       int // calls the executor first received during the replay
	ExecutedTwice                       int
	Violations                          []string
}

// replayAll replays every dead letter and checks that each replayed call
// reached a new outcome within wait, that none was skipped (each call has
// one letter, none is transport_incomplete) and that the replay sent no
// call to the executor a second time.
func replayAll(ctx context.Context, js jetstream.JetStream, letters []dlq.Letter, exe *Executor, wait time.Duration, logf func(string, ...any)) (ReplayCheck, error) {
	rc := ReplayCheck{Letters: len(letters), Outcomes: map[string]int{}}
	before := exe.Runs()
	if len(letters) == 0 {
		return rc, nil
	}
	sum, err := dlq.Replay(ctx, js, letters, dlq.Options{Wait: wait})
	if err != nil {
		return rc, err
	}
	rc.Replayed, rc.Skipped, rc.Pending = sum.Replayed, sum.Skipped, sum.Pending
	for st, n := range sum.Outcomes {
		rc.Outcomes[string(st)] = n
	}
	for _, it := range sum.Items {
		if it.Skip != "" && len(rc.Violations) < 20 {
			rc.Violations = append(rc.Violations, fmt.Sprintf("replay: dead letter %d (call %s) was not replayed: %s", it.Seq, it.CallID, it.Skip))
		}
	}
	if rc.Pending > 0 {
		rc.Violations = append(rc.Violations, fmt.Sprintf("replay: %d replayed calls had no new outcome within %v", rc.Pending, wait))
	}
	// Let every hop of the replay finish before counting executions.
	if err := testenv.Poll(wait, 500*time.Millisecond, func() error { return idle(ctx, js) }); err != nil {
		rc.Violations = append(rc.Violations, "replay: the pipeline did not come to rest: "+err.Error())
	}
	for id, n := range exe.Runs() {
		if n > 1 {
			rc.ExecutedTwice++
			if len(rc.Violations) < 40 {
				rc.Violations = append(rc.Violations, fmt.Sprintf("replay: call %s reached the executor %d times", id, n))
			}
		}
		if before[id] == 0 && n > 0 {
			rc.NewlyExecuted++
		}
	}
	logf("replayed %d of %d dead letters: outcomes %v, %d pending, %d newly executed, %d executed twice",
		rc.Replayed, rc.Letters, rc.Outcomes, rc.Pending, rc.NewlyExecuted, rc.ExecutedTwice)
	return rc, nil
}
