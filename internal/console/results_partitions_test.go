package console

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// With P = 3 the least-privilege console user reads a result stored in
// TOOLGATE_RESULTS_1 or _2: a response's results (the call page), the
// tenant's responses (the calls page's tenant filter) and the stage
// timings of the latest results.
func TestReader_reads_the_results_of_every_partition(t *testing.T) {
	r := newRigAs(t, nil, nil, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	set.Storage = jetstream.MemoryStorage
	set.Fair.Partitions = 3
	if err := streams.Ensure(ctx, r.js, set); err != nil {
		t.Fatal(err)
	}
	var rids []string
	for want := 1; want < 3; want++ {
		for i := 0; ; i++ {
			rid := "part-" + strconv.Itoa(i)
			if streams.Partition("acme", rid, 3) != want {
				continue
			}
			rids = append(rids, rid)
			at := time.Now()
			data, _ := json.Marshal(wire.Result{CallID: wire.CallID("acme", rid, 0), ResponseID: rid, Status: wire.Executed, OK: true,
				History: []wire.Step{{Stage: streams.Accumulate, At: at}, {Stage: streams.Execute, At: at.Add(time.Second)}}})
			m := nats.NewMsg(streams.ResultsIn("acme", rid, 3))
			m.Header.Set(streams.HeaderCallID, wire.CallID("acme", rid, 0))
			m.Data = data
			ack, err := r.js.PublishMsg(ctx, m)
			if err != nil || ack.Stream != streams.ResultsStream(want) {
				t.Fatalf("a result of partition %d: %v, %v", want, ack, err)
			}
			break
		}
	}
	responses, err := r.srv.tenantResponses(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for _, rid := range rids {
		res, err := r.srv.results(ctx, rid)
		if err != nil || len(res) != 1 || res[0].ResponseID != rid {
			t.Fatalf("the console's results of %s: %+v, %v", rid, res, err)
		}
		if !responses[rid] {
			t.Fatalf("acme's responses %v lack %s", responses, rid)
		}
	}
	times, err := r.srv.fromResults(ctx)
	if err != nil || times[streams.Execute][0] != time.Second {
		t.Fatalf("stage timings of the results: %v, %v", times, err)
	}
}
