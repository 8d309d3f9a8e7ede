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
	"github.com/toolgate/toolgate/streams/streamstest"
)

// With P = 2, calls waiting in partition 1 only show on the overview, read
// by the least-privilege console user: the stage's pending, the executor
// group's queue and the listed tenant's lane backlog (each read partition
// 0 only before), and a claimed whole response waiting at accumulate in
// TOOLGATE_RESPONSES.
func TestOverview_counts_a_backlog_in_partition_1(t *testing.T) {
	r := newRigAs(t, nil, nil, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	set.Storage = jetstream.MemoryStorage
	set = streamstest.Partition1Backlog(ctx, t, r.js, set)
	// And one claimed whole response of noisy's waiting at accumulate, in
	// TOOLGATE_RESPONSES (issue 30): its lane counts it too.
	if _, err := r.js.Publish(ctx, streams.InTenantClaimed("noisy", "r1"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	noisy, quiet := set.Fair.LaneIndex("noisy"), set.Fair.LaneIndex("quiet")
	want := []string{
		`data-live="stage.validate.pending">2<`,
		`<tr data-group="erp"><td>erp</td><td class="num">0/4</td><td class="num">3</td>`,
		`<td>noisy</td><td class="num">` + strconv.Itoa(noisy) + `</td><td class="num">3</td>`,
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
