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

// With fairness lanes a call waits in its stage's lanes' stream
// (TOOLGATE_GATE_<STAGE>), not in TOOLGATE_GATES: it is found there.
func TestFind_a_call_in_a_lane_is_read_from_its_stages_stream(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := streams.DefaultSettings()
	s.Fair = streams.Fair{Tenants: []string{"acme"}}
	if err := streams.Ensure(ctx, js, s); err != nil {
		t.Fatal(err)
	}
	em := &pipeline.Emitter{Lane: s.Fair.LaneFunc()}
	e := call.New("resp-l", 0, time.Now())
	e.ToolName, e.RawArguments, e.Request.Tenant = "get_weather", `{}`, "acme"
	outs, err := em.Outputs(streams.Accumulate, e)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: o.Subject, Header: o.Header, Data: o.Data}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := js.Stream(ctx, streams.LaneStream(streams.Parse))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := st.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Fatalf("%s: %+v, %v; want the call's hop", streams.LaneStream(streams.Parse), info, err)
	}
	got, err := Find(ctx, js, e.CallID, 0)
	if err != nil || got == nil || got.CallID != e.CallID {
		t.Fatalf("Find(%s) = %+v, %v; want its hop's record", e.CallID, got, err)
	}
}

// With partitions a call waits in its partition's stream: it is found
// there, whatever the reader's P.
func TestFind_a_call_in_flight_in_a_partition_stream(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := streams.DefaultSettings()
	s.Fair.Partitions = 4
	if err := streams.Ensure(ctx, js, s); err != nil {
		t.Fatal(err)
	}
	em := &pipeline.Emitter{Partitions: 4}
	var c call.Envelope
	for i := 0; ; i++ { // a response whose partition is not 0
		c = call.New("resp-p-"+string(rune('a'+i)), 0, time.Now())
		if streams.Partition(c.Request.Tenant, c.ResponseID, 4) != 0 {
			break
		}
	}
	c.ToolName, c.RawArguments = "get_weather", `{}`
	outs, err := em.Outputs(streams.Accumulate, c)
	if err != nil {
		t.Fatal(err)
	}
	stored := ""
	for _, o := range outs {
		ack, err := js.PublishMsg(ctx, &nats.Msg{Subject: o.Subject, Header: o.Header, Data: o.Data})
		if err != nil {
			t.Fatal(err)
		}
		stored = ack.Stream
	}
	if stored == streams.StreamGates {
		t.Fatalf("the hop was stored in %s, want its partition's stream", stored)
	}
	got, err := Find(ctx, js, c.CallID, 0)
	if err != nil || got == nil || got.CallID != c.CallID {
		t.Fatalf("Find(%s) = %+v, %v; want its hop's record from %s", c.CallID, got, err, stored)
	}
}
