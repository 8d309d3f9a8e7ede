package console

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// With P = 2, calls waiting in partition 1 only show on the overview, read
// by the least-privilege console user: the stage's pending, the executor
// group's queue and the listed tenant's lane backlog (each read partition
// 0 only before).
func TestOverview_counts_a_backlog_in_partition_1(t *testing.T) {
	r := newRigAs(t, nil, nil, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	set.Storage = jetstream.MemoryStorage
	set.Fair = streams.Fair{Tenants: []string{"noisy", "quiet"}, Partitions: 2}
	if err := streams.Ensure(ctx, r.js, set); err != nil {
		t.Fatal(err)
	}
	for p := range 2 {
		for _, c := range set.ExecuteGroupPartitionConsumers("erp", 4, p) {
			if _, err := r.js.CreateOrUpdateConsumer(ctx, c.Stream, set.Config(c)); err != nil {
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
			if _, err := r.js.Publish(ctx, subj, []byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{
		`data-live="stage.validate.pending">2<`,
		`<tr data-group="erp"><td>erp</td><td class="num">0/4</td><td class="num">3</td>`,
		`<td>noisy</td><td class="num">` + strconv.Itoa(noisy) + `</td><td class="num">2</td>`,
		`<td>quiet</td><td class="num">` + strconv.Itoa(quiet) + `</td><td class="num">3</td>`,
	}
	var body string
	err := testenv.Poll(10*time.Second, 100*time.Millisecond, func() error {
		var code int
		code, body = r.get(Prefix)
		if code != 200 {
			return fmt.Errorf("overview: %d", code)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				return fmt.Errorf("no %s", w)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v:\n%s", err, body)
	}
	for _, e := range []string{"fairness lanes: ", "executor groups: "} {
		if strings.Contains(body, e) {
			t.Errorf("the console user may not read: %s", e)
		}
	}
}
