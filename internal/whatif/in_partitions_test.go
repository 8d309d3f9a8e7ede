package whatif

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/natsmap/embedded"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// With P = 3 a tenant's batch responses are stored in its partition of
// TOOLGATE_IN (streams/in_partitions.go), and read back from there as its
// .response ones are from TOOLGATE_IN: each call is compared.
func TestRun_reads_the_batch_responses_in_the_input_partitions(t *testing.T) {
	srv := testenv.RunJetStream(t)
	if err := embedded.Apply(srv, 3); err != nil {
		t.Fatal(err)
	}
	_, js := testenv.Connect(t, srv)
	ctx := context.Background()
	set := streams.DefaultSettings()
	set.Fair.Partitions = 3
	if err := streams.Ensure(ctx, js, set); err != nil {
		t.Fatal(err)
	}
	tenant := ""
	for i := range 100 {
		if tok := fmt.Sprint("tenant", i); streams.BatchPartition(tok, 3) == 2 {
			tenant = tok
			break
		}
	}
	ins, recs := dayOf(t, 10, tenant)
	kv, err := js.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range ins {
		subject := []string{streams.InTenantResponse(tenant), streams.InTenantBatch(tenant)}[i%2]
		m := nats.NewMsg(subject)
		m.Header, m.Data = in.h, in.body
		ack, err := js.PublishMsg(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 && ack.Stream != streams.InputStream(2) {
			t.Fatalf("a batch response stored in %s, want %s", ack.Stream, streams.InputStream(2))
		}
		if _, err := kv.Put(ctx, call.ID(call.Key(tenant, fmt.Sprint("r", i)), 0), recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	ev := evaluator(t, newTools)
	rep, err := Run(ctx, Source{JS: js, Since: time.Now().Add(-time.Hour)}, ev)
	if err != nil {
		t.Fatal(err)
	}
	var order []input // TOOLGATE_IN's .response inputs, then partition 2's batch ones
	for _, k := range []int{0, 1} {
		for i := k; i < len(ins); i += 2 {
			order = append(order, ins[i])
		}
	}
	got, _ := json.Marshal(rep.JSON())
	want, _ := json.Marshal(inMemory(t, ev, order, recs).JSON())
	if string(got) != string(want) || len(rep.Skipped) != 0 {
		t.Fatalf("from the streams:\n%s\nin memory:\n%s", got, want)
	}
}
