package producer

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// With --partitions P = 3 a response of partition k >= 1 has its results
// on toolgate.results.<tenant>.<response-id>.p<k> (streams.ResultsIn): a
// Watch of the response receives them, as it does partition 0's.
func TestWatch_receives_a_result_of_a_partition_beyond_0(t *testing.T) {
	nc, js, _ := rig(t)
	rid := ""
	for i := 0; rid == ""; i++ {
		if id := "rp" + strconv.Itoa(i); streams.Partition("acme", id, 3) >= 1 {
			rid = id
		}
	}
	subject := streams.ResultsIn("acme", rid, 3)
	if subject == wire.Results("acme", rid) {
		t.Fatalf("partition %d's result on %s, the subject of partition 0", streams.Partition("acme", rid, 3), subject)
	}
	w, err := New(js).ForTenant("acme").Watch(rid)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	b, _ := json.Marshal(wire.Result{CallID: rid + "-0", ResponseID: rid, Status: wire.Executed, OK: true, ResponseCalls: 1})
	if err := nc.Publish(subject, b); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := w.AwaitResponse(ctx)
	if err != nil || len(r.Calls) != 1 || !r.Complete() {
		t.Fatalf("the watch of %s (its result on %s): %+v, %v", rid, subject, r, err)
	}
}
