package records

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

func setup(t *testing.T) (jetstream.JetStream, context.Context) {
	t.Helper()
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	return js, ctx
}

// executed is call index of tenant's response rid, moved to executed.
func executed(t *testing.T, tenant, rid string, index int) call.Envelope {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := call.New(rid, index, at)
	e.CallID = wire.CallID(tenant, rid, index)
	e.Request.Tenant, e.Request.Identity = tenant, call.IdentityVerified
	e.Provider, e.Model, e.ToolName, e.RawArguments = "openai-chat", "gpt-4o", "get_weather", `{"city":"secret-city"}`
	e.IdempotencyKey, e.ToolRevision = "idem-"+e.CallID, 3
	for _, m := range []struct {
		stage string
		to    call.Status
	}{{"parse", call.Parsed}, {"validate", call.Validated}, {"business", call.BusinessValid}, {"policy", call.Approved}, {"execute", call.Executed}} {
		if err := e.Move(m.stage, m.to, at); err != nil {
			t.Fatal(err)
		}
	}
	e.Result = json.RawMessage(`{"temp":21}`)
	return e
}

// publish stores what the emitter outputs for e at stage, as the worker
// does.
func publish(t *testing.T, ctx context.Context, js jetstream.JetStream, stage string, e call.Envelope) []string {
	t.Helper()
	em := &pipeline.Emitter{Registered: func(n string) bool { return n == "get_weather" }}
	outs, err := em.Outputs(stage, e)
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, o := range outs {
		if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: o.Subject, Header: o.Header, Data: o.Data}); err != nil {
			t.Fatalf("publish %s: %v", o.Subject, err)
		}
		subjects = append(subjects, o.Subject)
	}
	return subjects
}

// A call that ended without a record is found by its result: the lookup
// computes the result subject from the call id, for no tenant, a plain
// tenant and a tenant whose name is hashed, and the record it builds says
// what a stored one would have said.
func TestFind_a_call_that_wrote_no_record_is_read_from_its_result(t *testing.T) {
	js, ctx := setup(t)
	rd := Reader{JS: js}
	for _, tenant := range []string{"", "acme", "Acme Corp. (EU)"} {
		e := executed(t, tenant, "resp-1", 1)
		for _, s := range publish(t, ctx, js, streams.Execute, e) {
			if s == streams.CallStatus(e.CallID) {
				t.Fatalf("tenant %q: a valid call wrote its status record", tenant)
			}
		}
		if got, _ := Subject(e.CallID); got != streams.Results(tenant, "resp-1") {
			t.Fatalf("tenant %q: Subject(%s) = %s, want %s", tenant, e.CallID, got, streams.Results(tenant, "resp-1"))
		}
		got, err := rd.Find(ctx, e.CallID)
		if err != nil || got == nil {
			t.Fatalf("tenant %q: Find = %v, %v; want the record its result stands for", tenant, got, err)
		}
		want := pipeline.StatusOf(e)
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) {
			t.Fatalf("tenant %q: record from the result\n%s\nwant what the record would have been\n%s", tenant, gj, wj)
		}
	}
}

// A call that wrote a record (it waited for approval) keeps its final
// record, and the lookup reads it.
func TestFind_a_call_that_waited_reads_its_final_record(t *testing.T) {
	js, ctx := setup(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := call.New("resp-2", 0, at)
	e.ToolName, e.RawArguments, e.Provider = "get_weather", `{}`, "openai-chat"
	for _, m := range []struct {
		stage string
		to    call.Status
	}{{"parse", call.Parsed}, {"validate", call.Validated}, {"business", call.BusinessValid}, {"policy", call.ApprovalRequired}} {
		if err := e.Move(m.stage, m.to, at); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, ctx, js, streams.Policy, e)
	if err := e.Move("policy", call.ApprovalDenied, at); err != nil {
		t.Fatal(err)
	}
	subjects := publish(t, ctx, js, streams.Policy, e)
	found := false
	for _, s := range subjects {
		found = found || s == streams.CallStatus(e.CallID)
	}
	if !found {
		t.Fatalf("a call that waited wrote no final record; outputs %v", subjects)
	}
	got, err := Reader{JS: js}.Stored(ctx, e.CallID)
	if err != nil || got == nil || got.Status != call.ApprovalDenied {
		t.Fatalf("stored record %+v, %v; want approval_denied", got, err)
	}
}

// The lookup takes a result only when its Toolgate-Call-Id header names
// the call and its body says so too: a message on the subject under
// another call's header, or with the call's header and another call's
// body, is not the call's record. (A producer cannot publish on results:
// authz; this is the reader's own check.)
func TestResult_is_picked_by_header_and_body(t *testing.T) {
	js, ctx := setup(t)
	rd := Reader{JS: js}
	mine := executed(t, "acme", "resp-3", 0)
	other := executed(t, "acme", "resp-3", 1)
	subject := streams.Results("acme", "resp-3")
	put := func(header string, body call.Envelope, st call.Status) {
		t.Helper()
		res := (&pipeline.Emitter{}).ResultOf(body)
		res.Status = st
		data, _ := json.Marshal(res)
		m := &nats.Msg{Subject: subject, Header: nats.Header{}, Data: data}
		m.Header.Set(streams.HeaderCallID, header)
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	put(other.CallID, mine, call.PolicyRejected) // the body names mine, the header another
	put(mine.CallID, other, call.PolicyRejected) // the header names mine, the body another
	got, err := rd.Find(ctx, mine.CallID)
	if err != nil || got != nil {
		t.Fatalf("Find = %+v, %v; want nothing: no message is mine by header and body", got, err)
	}
	put(mine.CallID, mine, call.Executed)
	got, err = rd.Find(ctx, mine.CallID)
	if err != nil || got == nil || got.CallID != mine.CallID || got.Status != call.Executed {
		t.Fatalf("Find = %+v, %v; want mine, executed", got, err)
	}
	if got, _ := rd.Find(ctx, "acme=resp-3-9"); got != nil {
		t.Fatalf("a call with no result found: %+v", got)
	}
}

// A record that says the call waits at a stage (a retry wait whose steps
// did not reach the envelope) gives way to the call's result stored since.
func TestFind_a_waiting_record_gives_way_to_the_result(t *testing.T) {
	js, ctx := setup(t)
	e := executed(t, "", "resp-4", 0)
	waiting := pipeline.StatusOf(e)
	waiting.Status = call.Approved
	waiting.Waiting = &pipeline.Wait{Stage: streams.Execute, For: pipeline.WaitExecutor}
	data, _ := json.Marshal(waiting)
	kv, err := js.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, e.CallID, data); err != nil {
		t.Fatal(err)
	}
	rd := Reader{JS: js}
	if got, err := rd.Find(ctx, e.CallID); err != nil || got == nil || got.Status != call.Approved {
		t.Fatalf("before the result: %+v, %v; want the waiting record", got, err)
	}
	publish(t, ctx, js, streams.Execute, e)
	if got, err := rd.Find(ctx, e.CallID); err != nil || got == nil || got.Status != call.Executed {
		t.Fatalf("after the result: %+v, %v; want executed", got, err)
	}
}

// List finds the calls that ended without a record, not those in have.
func TestList_the_calls_that_ended_without_a_record(t *testing.T) {
	js, ctx := setup(t)
	a, b := executed(t, "", "resp-5", 0), executed(t, "acme", "resp-6", 0)
	publish(t, ctx, js, streams.Execute, a)
	publish(t, ctx, js, streams.Execute, b)
	list, err := Reader{JS: js}.List(ctx, "", 100, func(id string) bool { return id == a.CallID }, nil)
	if err != nil || len(list) != 1 || list[0].CallID != b.CallID {
		t.Fatalf("List = %+v, %v; want %s alone", list, err, b.CallID)
	}
	list, err = Reader{JS: js}.List(ctx, streams.ResultsOf("resp-5"), 100, nil, nil)
	if err != nil || len(list) != 1 || list[0].CallID != a.CallID {
		t.Fatalf("List of resp-5 = %+v, %v; want %s alone", list, err, a.CallID)
	}
}

// A result of before an operator replay does not end the replayed call:
// the record that says the replayed call waits stays its state.
func TestFind_a_result_of_before_a_replay_does_not_end_the_replayed_call(t *testing.T) {
	js, ctx := setup(t)
	e := executed(t, "", "resp-7", 0)
	publish(t, ctx, js, streams.Execute, e) // the first round's result, replays 0
	waiting := pipeline.StatusOf(e)
	waiting.Status, waiting.Replays = call.Approved, 1
	waiting.Waiting = &pipeline.Wait{Stage: streams.Execute, For: pipeline.WaitExecutor}
	data, _ := json.Marshal(waiting)
	kv, err := js.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, e.CallID, data); err != nil {
		t.Fatal(err)
	}
	got, err := Reader{JS: js}.Find(ctx, e.CallID)
	if err != nil || got == nil || got.Status != call.Approved || got.Replays != 1 {
		t.Fatalf("Find = %+v, %v; want the replayed call waiting", got, err)
	}
}
