package producer

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
)

// rig is a JetStream server with an ingest stream like TOOLGATE_IN.
func rig(t *testing.T) (*nats.Conn, jetstream.JetStream, jetstream.Stream) {
	t.Helper()
	nc, js := testenv.Connect(t, testenv.RunJetStream(t))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "IN", Subjects: []string{"toolgate.in.>"}, Duplicates: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return nc, js, st
}

func stored(t *testing.T, st jetstream.Stream) []*jetstream.RawStreamMsg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func TestPublishResponse_sends_the_headers_once_per_response_id(t *testing.T) {
	_, js, st := rig(t)
	p := New(js)
	m := Meta{Provider: "openai-chat", ResponseID: "resp-1", Principal: "alice", Tolerant: true, MaxTokens: 256, Token: "jwt"}
	if err := p.PublishResponse(context.Background(), m, []byte(`{"id":"x"}`)); err != nil {
		t.Fatal(err)
	}
	// A retried publish is stored once, and said to be a duplicate.
	if err := p.PublishResponse(context.Background(), m, []byte(`{"id":"x"}`)); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("retried publish: %v, want ErrDuplicate", err)
	}
	msgs := stored(t, st)
	if len(msgs) != 1 {
		t.Fatalf("%d messages stored, want 1", len(msgs))
	}
	got := msgs[0]
	want := map[string]string{
		wire.HeaderProvider: "openai-chat", wire.HeaderResponseID: "resp-1", nats.MsgIdHdr: "resp-1:" + digest(got.Header, []byte(`{"id":"x"}`)),
		wire.HeaderPrincipal: "alice", wire.HeaderTolerant: "true", wire.HeaderMaxTokens: "256", wire.HeaderToken: "jwt",
	}
	if got.Subject != wire.SubjectInResponse || string(got.Data) != `{"id":"x"}` {
		t.Fatalf("stored %s %s", got.Subject, got.Data)
	}
	for k, v := range want {
		if got.Header.Get(k) != v {
			t.Errorf("header %s = %q, want %q", k, got.Header.Get(k), v)
		}
	}
	if len(got.Header) != len(want) {
		t.Errorf("headers %v: an empty field must not be sent", got.Header)
	}
}

func TestPublishStream_numbers_events_and_ends_with_the_marker(t *testing.T) {
	_, js, st := rig(t)
	p := New(js)
	m := Meta{Provider: "anthropic", ResponseID: "s1", DryRun: true}
	if err := p.PublishStream(context.Background(), m, [][]byte{[]byte("a"), []byte("b"), []byte("c")}, "client went away"); err != nil {
		t.Fatal(err)
	}
	msgs := stored(t, st)
	if len(msgs) != 4 {
		t.Fatalf("%d messages stored, want 3 events and the end", len(msgs))
	}
	for i, ev := range msgs[:3] {
		h := ev.Header
		if ev.Subject != "toolgate.in.stream.s1" || string(ev.Data) != string(rune('a'+i)) || h.Get(wire.HeaderSeq) != string(rune('1'+i)) ||
			h.Get(nats.MsgIdHdr) != "s1:"+string(rune('1'+i))+":"+digest(h, ev.Data) || h.Get(wire.HeaderDryRun) != "true" || h.Get(wire.HeaderProvider) != "anthropic" || h.Get(wire.HeaderEnd) != "" {
			t.Errorf("event %d: %s %q %v", i+1, ev.Subject, ev.Data, h)
		}
	}
	if err := p.PublishStream(context.Background(), m, [][]byte{[]byte("a"), []byte("b"), []byte("c")}, "client went away"); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("republished stream: %v, want ErrDuplicate", err)
	}
	end := msgs[3]
	if len(end.Data) != 0 || end.Header.Get(wire.HeaderEnd) != "client went away" || end.Header.Get(wire.HeaderSeq) != "" || end.Header.Get(wire.HeaderResponseID) != "s1" {
		t.Errorf("end marker: %q %v", end.Data, end.Header)
	}
}

func TestPublish_refuses_a_response_it_cannot_name(t *testing.T) {
	_, js, st := rig(t)
	p := New(js)
	for _, m := range []Meta{{Provider: "ollama", ResponseID: "a.b"}, {Provider: "ollama"}, {ResponseID: "ok"}} {
		if err := p.PublishResponse(context.Background(), m, []byte(`{}`)); err == nil || !strings.HasPrefix(err.Error(), "producer: ") {
			t.Errorf("%+v: error %v, want a producer error", m, err)
		}
		if err := p.PublishStream(context.Background(), m, [][]byte{[]byte(`{}`)}, ""); err == nil {
			t.Errorf("%+v: stream published", m)
		}
	}
	if n := len(stored(t, st)); n != 0 {
		t.Fatalf("%d messages stored, want none", n)
	}
}

func TestValidResponseID_is_toolgates_rule(t *testing.T) {
	for _, id := range []string{"", "a", "resp_1-2", "a.b", "a b", "a*", "a>", "é", strings.Repeat("x", 128), strings.Repeat("x", 129), "toolgate-123"} {
		if ValidResponseID(id) != call.ValidResponseID(id) {
			t.Errorf("%q: producer says %v, toolgate says %v", id, ValidResponseID(id), call.ValidResponseID(id))
		}
	}
}

func TestAwait_collects_each_call_once_in_call_order(t *testing.T) {
	nc, js, _ := rig(t)
	w, err := New(js).Watch("r9")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	result := func(id string, msg string) []byte {
		b, _ := json.Marshal(wire.Result{CallID: id, ResponseID: "r9", Status: wire.Executed, OK: true, Message: json.RawMessage(msg)})
		return b
	}
	for _, b := range [][]byte{result("r9-10", `{"n":10}`), result("r9-2", `{"n":2}`), result("r9-10", `{"n":"again"}`)} {
		if err := nc.Publish(wire.Results("", "r9"), b); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	calls, resp, err := w.Await(ctx, 2)
	if err != nil || resp != nil || len(calls) != 2 || calls[0].CallID != "r9-2" || calls[1].CallID != "r9-10" {
		t.Fatalf("await: %+v %+v %v", calls, resp, err)
	}
	msgs := Messages(calls)
	if len(msgs) != 2 || string(msgs[0]) != `{"n":2}` || string(msgs[1]) != `{"n":10}` {
		t.Fatalf("messages %s", msgs)
	}
	// The duplicate is still queued; a response-level outcome ends an Await.
	rr, _ := json.Marshal(wire.ResponseResult{ResponseID: "r9", Provider: "ollama", Status: wire.NoToolCalls, OK: true})
	if err := nc.Publish(wire.Results("", "r9"), rr); err != nil {
		t.Fatal(err)
	}
	calls, resp, err = w.Await(ctx, 5)
	if err != nil || resp == nil || resp.Status != wire.NoToolCalls || len(calls) != 1 || string(calls[0].Message) != `{"n":"again"}` {
		t.Fatalf("await: %+v %+v %v", calls, resp, err)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if _, _, err := w.Await(short, 1); err != context.DeadlineExceeded {
		t.Fatalf("await with nothing coming: %v, want the deadline", err)
	}
}

// TestPublishResponse_other_content_under_a_used_id_is_not_a_duplicate: the
// duplicate ack used to be ignored, and the message id was the response id
// alone, so a second, different response under a used id was dropped by
// JetStream while the caller heard "published". Now the same content is
// ErrDuplicate and other content is stored, for toolgate to refuse
// (response_id_conflict, see Refused).
func TestPublishResponse_other_content_under_a_used_id_is_not_a_duplicate(t *testing.T) {
	_, js, st := rig(t)
	p := New(js)
	m := Meta{Provider: "openai-chat", ResponseID: "resp-2"}
	if err := p.PublishResponse(context.Background(), m, []byte(`{"id":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if err := p.PublishResponse(context.Background(), m, []byte(`{"id":"b"}`)); err != nil {
		t.Fatal(err)
	}
	if n := len(stored(t, st)); n != 2 {
		t.Fatalf("%d messages stored, want both, for toolgate to judge", n)
	}
	conflict := &wire.ResponseResult{ResponseID: "resp-2", Status: wire.ResponseIDConflict, Text: "used before"}
	if err := Refused(conflict); !errors.Is(err, ErrConflict) {
		t.Fatalf("Refused(response_id_conflict) = %v, want ErrConflict", err)
	}
	if err := Refused(&wire.ResponseResult{Status: wire.NoToolCalls}); err != nil {
		t.Fatalf("Refused(no_tool_calls) = %v", err)
	}
}

// TestPublishResponse_another_tenant_is_never_a_duplicate: JetStream's
// duplicate window spans the whole ingest stream, so the message id carries
// the sender: another tenant publishing the same body under the same
// response id first does not get this tenant's publish dropped as its
// duplicate (nor learns, from the acknowledgement, that the id was used).
func TestPublishResponse_another_tenant_is_never_a_duplicate(t *testing.T) {
	_, js, st := rig(t)
	p := New(js)
	body := []byte(`{"id":"x"}`)
	if err := p.PublishResponse(context.Background(), Meta{Provider: "openai-chat", ResponseID: "victim-0", Tenant: "evil"}, body); err != nil {
		t.Fatal(err)
	}
	if err := p.PublishResponse(context.Background(), Meta{Provider: "openai-chat", ResponseID: "victim-0", Tenant: "victim"}, body); err != nil {
		t.Fatalf("the victim's publish after evil's with the same id and body: %v, want stored", err)
	}
	if err := p.PublishStream(context.Background(), Meta{Provider: "anthropic", ResponseID: "s-0", Tenant: "evil"}, [][]byte{body}, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := p.PublishStream(context.Background(), Meta{Provider: "anthropic", ResponseID: "s-0", Tenant: "victim"}, [][]byte{body}, "gone"); err != nil {
		t.Fatalf("the victim's stream after evil's: %v, want stored", err)
	}
	if n := len(stored(t, st)); n != 6 {
		t.Fatalf("%d messages stored, want 6", n)
	}
}

// A tenant's batch response goes on the tenant's batch subject, which
// accumulate reads apart from its interactive responses; an interactive or
// unmarked one on its response subject; a batch response of no tenant, or
// of a producer publishing on its own asserting subject, where it went
// before (no tenant subject, no lane). A stream of a batch producer keeps
// its stream subject (whole responses only on .batch).
func TestPublishResponse_a_tenants_batch_response_goes_on_its_batch_subject(t *testing.T) {
	_, js, st := rig(t)
	ctx := context.Background()
	body := []byte(`{"id":"x"}`)
	acme := New(js).ForTenant("acme")
	for _, c := range []struct {
		p    *Producer
		rid  string
		prio string
	}{
		{acme, "b1", wire.PriorityBatch},
		{acme, "i1", wire.PriorityInteractive},
		{acme, "n1", ""},
		{New(js), "shared-b", wire.PriorityBatch},
		{New(js).AssertingAs("gw"), "as-b", wire.PriorityBatch},
	} {
		if err := c.p.PublishResponse(ctx, Meta{Provider: "openai-chat", ResponseID: c.rid, Priority: c.prio}, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := acme.PublishStream(ctx, Meta{Provider: "anthropic", ResponseID: "s1", Priority: wire.PriorityBatch}, [][]byte{body}, ""); err != nil {
		t.Fatal(err)
	}
	// A tenant's interactive response goes on its claimed subject (the
	// publish is the response-id claim, claimed.go).
	want := []string{wire.InTenantBatch("acme"), wire.InTenantClaimed("acme", "i1"), wire.InTenantClaimed("acme", "n1"), wire.SubjectInResponse, wire.InAsResponse("gw"), wire.InTenantStream("acme", "s1")}
	msgs := stored(t, st)
	if len(msgs) != len(want) {
		t.Fatalf("%d stored, want %d", len(msgs), len(want))
	}
	for i, m := range msgs {
		if m.Subject != want[i] {
			t.Errorf("%s on %s, want %s", m.Header.Get(wire.HeaderResponseID), m.Subject, want[i])
		}
	}
	if msgs[0].Header.Get(wire.HeaderPriority) != wire.PriorityBatch {
		t.Errorf("the batch response lost its header: %v", msgs[0].Header)
	}
}
