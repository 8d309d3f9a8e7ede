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
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
	"github.com/toolgate/toolgate/streams/streamstest"
)

// With P = 2, input waiting at accumulate in TOOLGATE_IN_1
// (streams/in_partitions.go) shows on the overview, read by the
// least-privilege console user: accumulate's pending and the listed
// tenant's lane backlog.
func TestOverview_counts_input_waiting_in_an_input_partition(t *testing.T) {
	r := newRigAs(t, nil, nil, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	set.Storage = jetstream.MemoryStorage
	set = streamstest.Partition1Backlog(ctx, t, r.js, set)
	for _, subj := range []string{wire.InTenantStream("noisy", "r2") + ".1", wire.InTenantBatch("noisy") + ".1"} {
		if _, err := r.js.Publish(ctx, subj, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	noisy := set.Fair.LaneIndex("noisy")
	want := []string{
		`data-live="stage.accumulate.pending">2<`,
		`<td>noisy</td><td class="num">` + strconv.Itoa(noisy) + `</td><td class="num">4</td>`, // 2 at validate, 2 at accumulate
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
}
