package dlq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

type rig struct {
	t   *testing.T
	js  jetstream.JetStream
	ctx context.Context
}

func newRig(t *testing.T) rig {
	t.Helper()
	s := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, s)
	r := rig{t: t, js: js, ctx: context.Background()}
	if err := streams.Ensure(r.ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	return r
}

// failed builds a call that failed at validate with class schema_invalid,
// the way the repair gate ends it without a model.
func failed(t *testing.T, rid, tool string) call.Envelope {
	t.Helper()
	now := time.Now()
	e := call.New(rid, 0, now)
	e.Provider, e.ToolName, e.RawArguments = "openai-chat", tool, `{"city":7}`
	// Sealed as accumulate and parse would have: a replay may enter validate.
	kr := sealtest.Keys(t)
	if err := kr.Seal(seal.Accumulate, &e); err != nil {
		t.Fatal(err)
	}
	e.Arguments = []byte(`{"city":7}`)
	for _, m := range []struct {
		stage string
		to    call.Status
	}{{"parse", call.Parsed}, {"validate", call.SchemaInvalid}, {"repair", call.Failed}} {
		if err := e.Move(m.stage, m.to, now, "/city: got number, want string"); err != nil {
			t.Fatal(err)
		}
		if seal.Passes(m.stage, m.to) {
			if err := kr.Seal(m.stage, &e); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.Failure = call.SchemaInvalid
	return e
}

// kill publishes e's outputs as its stage would: result, status, dead letter.
func (r rig) kill(stage string, e call.Envelope) {
	r.t.Helper()
	outs, err := (&pipeline.Emitter{}).Outputs(stage, e)
	if err != nil {
		r.t.Fatal(err)
	}
	r.publish(outs...)
}

func (r rig) publish(outs ...worker.Output) {
	r.t.Helper()
	for _, o := range outs {
		m := &nats.Msg{Subject: o.Subject, Header: o.Header, Data: o.Data}
		var opts []jetstream.PublishOpt
		if o.MsgID != "" {
			opts = append(opts, jetstream.WithMsgID(o.MsgID))
		}
		if _, err := r.js.PublishMsg(r.ctx, m, opts...); err != nil {
			r.t.Fatal(err)
		}
	}
}

// rawInput dead-letters an ingest message as the accumulate gate does.
func (r rig) rawInput(rid string) {
	r.t.Helper()
	h := nats.Header{}
	h.Set(streams.HeaderProvider, "acme-llm")
	h.Set(streams.HeaderResponseID, rid)
	h.Set(nats.MsgIdHdr, rid)
	m := worker.Msg{Subject: streams.SubjectInResponse, Header: h, Data: []byte(`{"id":"x"}`), StreamSeq: 42}
	r.publish((&pipeline.Emitter{}).Raw(streams.Accumulate, "unknown_provider", m, errors.New("header Toolgate-Provider is \"acme-llm\"")))
}

// gateMsgs fetches what waits for stage's durable consumer.
func (r rig) gateMsgs(stage string) []jetstream.Msg {
	r.t.Helper()
	c, err := r.js.Consumer(r.ctx, streams.StreamGates, stage)
	if err != nil {
		r.t.Fatal(err)
	}
	b, err := c.Fetch(100, jetstream.FetchMaxWait(300*time.Millisecond))
	if err != nil {
		r.t.Fatal(err)
	}
	var out []jetstream.Msg
	for m := range b.Messages() {
		out = append(out, m)
		m.Ack()
	}
	return out
}

func TestList_filters_by_stage_failure_tool_and_time(t *testing.T) {
	r := newRig(t)
	r.kill("repair", failed(t, "r1", "get_weather"))
	r.kill("repair", failed(t, "r2", "create_invoice"))
	r.rawInput("r3")
	all, err := List(r.ctx, r.js, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Fatalf("listed %d letters, want 3", len(all))
	}
	for _, c := range []struct {
		name string
		f    Filter
		want []string
	}{
		{"stage", Filter{Stage: "validate"}, []string{"r1-0", "r2-0"}},
		{"failure", Filter{Failure: "unknown_provider"}, []string{""}},
		{"tool", Filter{Tool: "create_invoice"}, []string{"r2-0"}},
		{"call", Filter{CallID: "r1-0"}, []string{"r1-0"}},
		{"since later", Filter{Since: time.Now().Add(time.Hour)}, nil},
		{"until earlier", Filter{Until: time.Now().Add(-time.Hour)}, nil},
		{"window", Filter{Since: time.Now().Add(-time.Hour), Until: time.Now().Add(time.Hour), Stage: "validate"}, []string{"r1-0", "r2-0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := List(r.ctx, r.js, c.f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, l := range got {
				ids = append(ids, l.CallID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(c.want) {
				t.Fatalf("call ids %q, want %q", ids, c.want)
			}
		})
	}
}

func TestGet_decodes_a_call_and_raw_input(t *testing.T) {
	r := newRig(t)
	r.kill("repair", failed(t, "r1", "get_weather"))
	r.rawInput("r2")
	all, err := List(r.ctx, r.js, Filter{})
	if err != nil || len(all) != 2 {
		t.Fatalf("list: %v (%d)", err, len(all))
	}
	l, err := Get(r.ctx, r.js, all[0].Seq)
	if err != nil {
		t.Fatal(err)
	}
	if l.Input() || l.Envelope.RawArguments != `{"city":7}` || l.Stage != "validate" || l.Failure != "schema_invalid" || l.Tool != "get_weather" {
		t.Fatalf("call letter decoded as %+v", l)
	}
	if !strings.Contains(l.FirstError(), "/city") {
		t.Errorf("first error %q", l.FirstError())
	}
	in, err := Get(r.ctx, r.js, all[1].Seq)
	if err != nil {
		t.Fatal(err)
	}
	if !in.Input() || in.OrigSubject != streams.SubjectInResponse || in.ResponseID != "r2" || string(in.Data) != `{"id":"x"}` || !strings.Contains(in.FirstError(), "acme-llm") {
		t.Fatalf("input letter decoded as %+v", in)
	}
	if _, err := Get(r.ctx, r.js, 999); err == nil {
		t.Error("a missing sequence did not fail")
	}
}

func TestReplay_resets_the_call_into_its_stage_with_new_ids_and_the_same_call_id(t *testing.T) {
	r := newRig(t)
	r.kill("repair", failed(t, "r1", "get_weather"))
	letters, err := List(r.ctx, r.js, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 2; round++ {
		sum, err := Replay(r.ctx, r.js, letters, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Replayed != 1 || sum.Pending != 1 {
			t.Fatalf("round %d: summary %+v, want 1 replayed and pending", round, sum)
		}
		msgs := r.gateMsgs(streams.Validate)
		if len(msgs) != 1 {
			t.Fatalf("round %d: %d messages for validate, want 1 (a new message id each replay)", round, len(msgs))
		}
		e, err := call.Unmarshal(msgs[0].Data())
		if err != nil {
			t.Fatal(err)
		}
		last := e.History[len(e.History)-1]
		if e.CallID != "r1-0" || e.Status != call.Parsed || e.Failure != "" || e.Errors != nil || e.Replays != round {
			t.Fatalf("round %d: replayed envelope %s status %s failure %q replays %d", round, e.CallID, e.Status, e.Failure, e.Replays)
		}
		if last.Stage != "validate" || !strings.Contains(last.Note, fmt.Sprintf("replayed from dlq seq %d", letters[0].Seq)) {
			t.Fatalf("round %d: last step %+v does not record the replay", round, last)
		}
		if msgs[0].Headers().Get(streams.HeaderReplay) == "" || msgs[0].Headers().Get(streams.HeaderCallID) != "r1-0" {
			t.Fatalf("round %d: headers %v", round, msgs[0].Headers())
		}
	}
}

func TestReplay_skips_what_must_not_run_and_keeps_the_newest_letter_per_call(t *testing.T) {
	r := newRig(t)
	r.kill("repair", failed(t, "r1", "get_weather"))
	second := failed(t, "r1", "get_weather")
	second.Replays = 1 // failed again after a replay: a newer letter
	r.kill("repair", second)
	cut := call.New("r2", 0, time.Now())
	cut.Provider, cut.ToolName, cut.RawArguments = "anthropic", "get_weather", `{"ci`
	if err := cut.Move("accumulate", call.TransportIncomplete, time.Now(), "stream ended without message_stop"); err != nil {
		t.Fatal(err)
	}
	r.kill("accumulate", cut)
	letters, err := List(r.ctx, r.js, Filter{})
	if err != nil || len(letters) != 3 {
		t.Fatalf("list: %v (%d)", err, len(letters))
	}
	sum, err := Replay(r.ctx, r.js, letters, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Replayed != 1 || sum.Skipped != 2 {
		t.Fatalf("dry run summary %+v, want 1 replayed and 2 skipped", sum)
	}
	reasons := map[uint64]string{}
	for _, it := range sum.Items {
		reasons[it.Seq] = it.Skip
	}
	if !strings.Contains(reasons[letters[0].Seq], "newer dead letter") || reasons[letters[1].Seq] != "" || !strings.Contains(reasons[letters[2].Seq], "never finalized") {
		t.Fatalf("skip reasons %v", reasons)
	}
	if n := len(r.gateMsgs(streams.Validate)); n != 0 {
		t.Fatalf("a dry run published %d messages", n)
	}
	if _, err := Replay(r.ctx, r.js, letters, Options{ToStage: "repair"}); err == nil {
		t.Error("a replay into repair was accepted")
	}
}

func TestReplay_input_goes_back_to_its_subject_with_its_headers(t *testing.T) {
	r := newRig(t)
	r.rawInput("r9")
	letters, err := List(r.ctx, r.js, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := r.js.Stream(r.ctx, streams.StreamIn)
	before, _ := st.Info(r.ctx)
	for range 2 {
		if sum, err := Replay(r.ctx, r.js, letters, Options{}); err != nil || sum.Replayed != 1 {
			t.Fatalf("replay: %v %+v", err, sum)
		}
	}
	after, _ := st.Info(r.ctx)
	if after.State.Msgs-before.State.Msgs != 2 {
		t.Fatalf("%d inputs republished, want 2 (a new message id each time)", after.State.Msgs-before.State.Msgs)
	}
	m, err := st.GetMsg(r.ctx, after.State.LastSeq)
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != streams.SubjectInResponse || m.Header.Get(streams.HeaderProvider) != "acme-llm" || m.Header.Get(streams.HeaderResponseID) != "r9" ||
		m.Header.Get(streams.HeaderFailure) != "" || m.Header.Get(streams.HeaderOrigSubject) != "" || string(m.Data) != `{"id":"x"}` {
		t.Fatalf("republished input %s %v %q", m.Subject, m.Header, m.Data)
	}
}

func TestPurge_deletes_only_the_selected_letters(t *testing.T) {
	r := newRig(t)
	r.kill("repair", failed(t, "r1", "get_weather"))
	r.kill("repair", failed(t, "r2", "create_invoice"))
	sel, err := List(r.ctx, r.js, Filter{Tool: "get_weather"})
	if err != nil || len(sel) != 1 {
		t.Fatalf("list: %v (%d)", err, len(sel))
	}
	if n, err := Purge(r.ctx, r.js, sel); err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
	if n, err := Purge(r.ctx, r.js, sel); err != nil || n != 0 {
		t.Fatalf("purging again: %d %v, want 0 and no error", n, err)
	}
	left, err := List(r.ctx, r.js, Filter{})
	if err != nil || len(left) != 1 || left[0].CallID != "r2-0" {
		t.Fatalf("left %v %v", left, err)
	}
}

// A call that failed without ever writing a status record (issue 30: its
// result is its record) has its fate read from its result, and its replays
// number from it: 1, then 2 from the record the first replay wrote.
func TestReplay_of_a_call_that_wrote_no_record_numbers_from_its_result(t *testing.T) {
	r := newRig(t)
	r.kill("repair", failed(t, "r9", "get_weather"))
	kv, err := r.js.KeyValue(r.ctx, streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(r.ctx, "r9-0"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("a status record is stored (%v): the failed call's result is its record", err)
	}
	letters, err := List(r.ctx, r.js, Filter{})
	if err != nil || len(letters) != 1 {
		t.Fatalf("letters %v, %v", letters, err)
	}
	fates, err := Fates(r.ctx, r.js, letters)
	if err != nil {
		t.Fatal(err)
	}
	if f := fates[letters[0].Seq]; f.Kind != FateOpen || f.Status != call.SchemaInvalid {
		t.Fatalf("fate %+v, want open, schema_invalid (read from the result)", f)
	}
	for round := 1; round <= 2; round++ {
		if _, err := Replay(r.ctx, r.js, letters, Options{}); err != nil {
			t.Fatal(err)
		}
		msgs := r.gateMsgs(streams.Validate)
		if len(msgs) != 1 {
			t.Fatalf("round %d: %d messages for validate, want 1", round, len(msgs))
		}
		e, err := call.Unmarshal(msgs[0].Data())
		if err != nil || e.Replays != round {
			t.Fatalf("round %d: replays %d (%v), want %d", round, e.Replays, err, round)
		}
	}
}
