package publish

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// A call in flight has no status record (issue 30): status answers it, by
// call id and by response id, from the hop it waits in, and calls ls lists
// it. Before, with the record at entry gone, status said it knew no such
// call.
func TestStatus_call_in_flight_is_answered_from_its_hop(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	e := call.New("rfly", 0, time.Now())
	e.ToolName, e.RawArguments = "create_invoice", `{"amount":5}`
	outs, err := (&pipeline.Emitter{}).Outputs(streams.Accumulate, e)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: o.Subject, Header: o.Header, Data: o.Data}); err != nil {
			t.Fatal(err)
		}
	}
	rd := &reader{ctx: ctx, js: js, now: time.Now, idle: time.Minute}
	for _, id := range []string{"rfly-0", "rfly"} {
		var b bytes.Buffer
		if err := rd.status(&b, id, false); err != nil {
			t.Fatalf("status %s: %v", id, err)
		}
		if !strings.Contains(b.String(), "rfly-0") || !strings.Contains(b.String(), "create_invoice") || !strings.Contains(b.String(), string(e.Status)) {
			t.Errorf("status %s does not show the call in flight:\n%s", id, b.String())
		}
	}
	recs, err := scanCalls(ctx, js, callFilter{tool: "create_invoice"})
	if err != nil || len(recs) != 1 || recs[0].CallID != "rfly-0" {
		t.Fatalf("calls ls: %+v, %v; want the call in flight", recs, err)
	}
}
