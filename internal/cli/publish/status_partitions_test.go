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
	set := streams.DefaultSettings()
	set.Fair = streams.Fair{Tenants: []string{"noisy", "quiet"}, Partitions: 2}
	if err := streams.Ensure(ctx, js, set); err != nil {
		t.Fatal(err)
	}
	for p := range 2 {
		for _, c := range set.ExecuteGroupPartitionConsumers("erp", 4, p) {
			if _, err := js.CreateOrUpdateConsumer(ctx, c.Stream, set.Config(c)); err != nil {
				t.Fatal(err)
			}
		}
	}
	noisy, quiet := set.Fair.LaneIndex("noisy"), set.Fair.LaneIndex("quiet")
	for subj, n := range map[string]int{
		streams.PartitionGateLane(streams.Validate, streams.LaneToken(noisy, true), 1): 2,
		streams.PartitionExecuteSubject("erp", streams.LaneToken(quiet, false), 1):     3,
	} {
		for range n {
			if _, err := js.Publish(ctx, subj, []byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
	}
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
