package publish

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

// Point 3: with no executor listening, a call does not look new: status
// shows it waiting for an executor at execute, with the attempt numbers,
// results says still waiting (exit 4), and calls ls puts it at execute.
func TestStatus_call_without_executor_shows_the_wait_with_attempts(t *testing.T) {
	r := clitest.StartStoryRig(t)
	r.Publish(t, "stuck-1", clitest.ToolCall{ID: "call_tf", Name: "transfer_funds", Args: `{"amount":5}`})
	out := r.WaitFor(t, statusCmd, []string{"stuck-1-0"}, "now       waiting for an executor", "transfer_funds", "at execute]")
	if !regexp.MustCompile(`attempt \d+( of \d+)?`).MatchString(out) {
		t.Errorf("no attempt number in the wait:\n%s", out)
	}
	if strings.Contains(out, "now       on its way") {
		t.Errorf("the stuck call looks like it moves:\n%s", out)
	}
	res, err := r.Run(resultsCmd, "stuck-1")
	if clitest.Code(err) != exitResultsWaiting || !strings.Contains(res, "waiting for an executor") {
		t.Errorf("results of a stuck call: exit %d (%v)\n%s", clitest.Code(err), err, res)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs, err := scanCalls(ctx, r.JS, callFilter{response: "stuck-1", stage: streams.Execute})
	if err != nil || len(recs) != 1 {
		t.Errorf("calls ls --stage execute: %v, %d records", err, len(recs))
	}
}
