package inflight

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// A call that entered and has not ended has no status record; it is found
// by its hop, as the emitter wrote it, and shows what a stored record
// would: its status, history and tool (an unregistered name hashed as the
// header carries it), never its arguments.
func TestFind_a_call_in_flight_is_read_from_its_hop(t *testing.T) {
	srv := testenv.RunJetStream(t)
	nc, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	em := &pipeline.Emitter{Registered: func(n string) bool { return n == "get_weather" }}
	publish := func(e call.Envelope) {
		t.Helper()
		outs, err := em.Outputs(streams.Accumulate, e)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			if o.Subject == streams.CallStatus(e.CallID) {
				t.Fatalf("accumulate wrote a status record for %s (none at entry, issue 30)", e.CallID)
			}
			m := &nats.Msg{Subject: o.Subject, Header: o.Header, Data: o.Data}
			if _, err := js.PublishMsg(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	a := call.New("resp-a", 0, time.Now())
	a.ToolName, a.RawArguments = "get_weather", `{"city":"secret-city"}`
	b := call.New("resp-a", 1, time.Now())
	b.ToolName, b.RawArguments = "no_such_tool", `{}`
	publish(a)
	publish(b)
	_ = nc

	got, err := Find(ctx, js, b.CallID, 0)
	if err != nil || got == nil {
		t.Fatalf("Find(%s) = %v, %v; want its hop's record", b.CallID, got, err)
	}
	if got.CallID != b.CallID || got.ResponseID != "resp-a" || got.Status != b.Status || len(got.History) != len(b.History) {
		t.Errorf("record %+v does not say what the hop carries", got)
	}
	if got.Tool == "no_such_tool" || got.Tool == "" {
		t.Errorf("an unregistered tool name shown as %q, want it hashed", got.Tool)
	}
	all, err := List(ctx, js, 0, nil)
	if err != nil || len(all) != 2 || all[0].CallID != a.CallID || all[0].Tool != "get_weather" {
		t.Fatalf("List = %+v, %v; want both calls, oldest first, the registered name in clear", all, err)
	}
	if all[0].ArgumentsHash == "" {
		t.Error("the record lacks the arguments' hash")
	}
	if none, err := Find(ctx, js, "resp-a-7", 0); err != nil || none != nil {
		t.Errorf("Find of a call with no hop = %v, %v; want nil, nil", none, err)
	}
}
