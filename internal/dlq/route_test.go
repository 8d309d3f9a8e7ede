package dlq

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

// A call whose executor failed is replayed into its executor group's
// subject, where its group's durable (bulkhead, circuit) takes it — not
// into the legacy execute subject, where it would run beside every group
// (issue 38). A tool no longer registered keeps the legacy subject.
func TestReplay_of_an_execute_failure_goes_to_the_calls_executor_group(t *testing.T) {
	r := newRig(t)
	defs, err := tool.Load("t", []byte(`
tools:
  - name: erp_post
    description: Posts to the ERP.
    input_schema: {type: object, properties: {amount: {type: integer}}}
    executor: {group: erp}
`))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := r.js.KeyValue(r.ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Apply(r.ctx, kv, "t", defs, false); err != nil {
		t.Fatal(err)
	}
	kr := sealtest.Keys(t)
	for _, c := range []struct{ rid, tool string }{{"r-erp", "erp_post"}, {"r-gone", "gone_tool"}} {
		e := call.New(c.rid, 0, time.Now())
		e.ToolName, e.RawArguments = c.tool, `{"amount":1}`
		through(t, kr, &e, seal.Gates(), streams.Execute, call.ExecutionFailed)
		outs, err := (&pipeline.Emitter{}).Outputs(streams.Execute, e)
		if err != nil {
			t.Fatal(err)
		}
		r.publish(outs...)
	}
	letters, err := List(r.ctx, r.js, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Replay(r.ctx, r.js, letters, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Replayed != 2 {
		t.Fatalf("summary %+v, want both replayed", sum)
	}
	want := map[string]string{"r-erp-0": streams.ExecuteSubject("erp", streams.ExecuteLane), "r-gone-0": streams.Gate(streams.Execute)}
	for _, it := range sum.Items {
		if it.Subject != want[it.CallID] {
			t.Errorf("%s: replayed to %s, want %s", it.CallID, it.Subject, want[it.CallID])
		}
	}
	// And the message is where the group's durable reads it.
	if _, err := r.js.CreateOrUpdateConsumer(r.ctx, streams.StreamExecute, jetstream.ConsumerConfig{Durable: "t", FilterSubject: streams.ExecuteGroupFilter("erp"), AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	c, err := r.js.Consumer(r.ctx, streams.StreamExecute, "t")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Fetch(10, jetstream.FetchMaxWait(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for m := range b.Messages() {
		got = append(got, m.Headers().Get(streams.HeaderCallID))
	}
	if len(got) != 1 || got[0] != "r-erp-0" {
		t.Fatalf("erp group's queue holds %v, want the replayed r-erp-0", got)
	}
	if msgs := r.gateMsgs(streams.Execute); len(msgs) != 1 || msgs[0].Headers().Get(streams.HeaderCallID) != "r-gone-0" {
		t.Fatalf("legacy execute subject holds %d messages, want only r-gone-0", len(msgs))
	}
}
