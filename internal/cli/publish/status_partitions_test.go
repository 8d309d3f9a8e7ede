package publish

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
	"github.com/toolgate/toolgate/streams/streamstest"
)

// With P = 2, calls waiting in partition 1 only show in `toolgate status`
// without an operand: the executor group's queue and the listed tenants'
// lane backlogs (both read partition 0 only before).
func TestStatus_overview_counts_a_backlog_in_partition_1(t *testing.T) {
	t.Setenv("TOOLGATE_SECRETS", t.TempDir())
	t.Setenv("TOOLGATE_NATS_USER", "")
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	streamstest.Partition1Backlog(ctx, t, js, streams.DefaultSettings())
	want := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\s*erp\s+0/4\s+3\s`),       // GROUP IN USE QUEUE
		regexp.MustCompile(`(?m)^\s*noisy\s+\d+\s+2\s+2\s`), // TENANT LANE BACKLOG BATCH
		regexp.MustCompile(`(?m)^\s*quiet\s+\d+\s+3\s+0\s`),
	}
	var out bytes.Buffer
	err := testenv.Poll(10*time.Second, 50*time.Millisecond, func() error {
		out.Reset()
		if err := RunStatus(&out, []string{"--nats", srv.ClientURL()}); err != nil {
			return err
		}
		for _, re := range want {
			if !re.MatchString(out.String()) {
				return fmt.Errorf("no line matching %s", re)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
}
