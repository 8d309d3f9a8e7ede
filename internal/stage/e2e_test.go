package stage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/records"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// pipe is the whole pipeline in one process over an embedded NATS server and
// a real redis-server, with the example tools and a counting executor.
type pipe struct {
	t        *testing.T
	nc       *nats.Conn
	js       jetstream.JetStream
	executed atomic.Int32
	ctx      context.Context
	defs     []tool.Definition // the tool definitions applied
}

func startPipeline(t *testing.T) *pipe { return startRig(t, rig{}) }

func (p *pipe) publish(rid, provider string, body []byte, extra ...string) {
	p.t.Helper()
	m := nats.NewMsg(streams.SubjectInResponse)
	if i := slices.Index(extra, streams.HeaderTenant); i >= 0 && i+1 < len(extra) {
		// A tenant's producer publishes on its tenant's own subject.
		m.Subject = wire.InResponseFor(extra[i+1])
	}
	if slices.Contains(extra, streams.HeaderRoles) {
		// Roles count only from a user the deployment lets assert them
		// (startRig lists rigUser), on its own subject.
		m.Subject = wire.InAsResponse(rigUser)
	}
	m.Data = body
	if provider != "" {
		m.Header.Set(streams.HeaderProvider, provider)
	}
	m.Header.Set(streams.HeaderResponseID, rid)
	m.Header.Set(nats.MsgIdHdr, rid)
	for i := 0; i+1 < len(extra); i += 2 {
		m.Header.Set(extra[i], extra[i+1])
	}
	if _, err := p.js.PublishMsg(p.ctx, m); err != nil {
		p.t.Fatal(err)
	}
}

// results returns every result published for rid so far, in every
// results stream (streams.ResultsStreams: every partition's).
func (p *pipe) results(rid string) []map[string]any {
	p.t.Helper()
	refs, err := streams.ResultsStreams(p.ctx, p.js)
	if err != nil {
		p.t.Fatal(err)
	}
	var out []map[string]any
	for _, ref := range refs {
		out = append(out, p.resultsIn(ref, rid)...)
	}
	return out
}

// resultsIn returns the results published for rid so far in one results
// stream.
func (p *pipe) resultsIn(ref streams.ResultsStreamRef, rid string) []map[string]any {
	p.t.Helper()
	st, err := p.js.Stream(p.ctx, ref.Name)
	if err != nil {
		p.t.Fatal(err)
	}
	c, err := st.OrderedConsumer(p.ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{streams.ResultsOfIn(ref.P, rid)}})
	if err != nil {
		p.t.Fatal(err)
	}
	var out []map[string]any
	for {
		msgs, err := c.FetchNoWait(100)
		if err != nil {
			p.t.Fatal(err)
		}
		n := 0
		for m := range msgs.Messages() {
			n++
			var r map[string]any
			if err := json.Unmarshal(m.Data(), &r); err != nil {
				p.t.Fatal(err)
			}
			out = append(out, r)
		}
		if n == 0 {
			return out
		}
	}
}

func (p *pipe) waitResults(rid string, n int) []map[string]any {
	p.t.Helper()
	var rs []map[string]any
	testenv.Eventually(p.t, 15*time.Second, 25*time.Millisecond, func() error {
		rs = p.results(rid)
		if len(rs) < n {
			return fmt.Errorf("%d results for %s, want %d", len(rs), rid, n)
		}
		return nil
	})
	return rs
}

func (p *pipe) dlq(subject string) []*jetstream.RawStreamMsg {
	p.t.Helper()
	st, err := p.js.Stream(p.ctx, streams.StreamDLQ)
	if err != nil {
		p.t.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	info, err := st.Info(p.ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(p.ctx, seq)
		if err != nil {
			continue
		}
		if m.Subject == subject {
			out = append(out, m)
		}
	}
	return out
}

// dlqAtLeast waits until subject holds at least n dead letters and
// returns what it holds then. A worker publishes a call's dead letter after
// its status record and result, and the server stores each stream's
// messages on its own: the dead letter can land after the result was read.
func (p *pipe) dlqAtLeast(subject string, n int) []*jetstream.RawStreamMsg {
	p.t.Helper()
	var out []*jetstream.RawStreamMsg
	testenv.Eventually(p.t, 5*time.Second, 20*time.Millisecond, func() error {
		if out = p.dlq(subject); len(out) < n {
			return fmt.Errorf("%d dead letters on %s so far, want %d", len(out), subject, n)
		}
		return nil
	})
	return out
}

func (p *pipe) status(callID string) pipeline.StatusRecord {
	p.t.Helper()
	// The stored record, or the result of a call that wrote none (issue 30).
	var rec pipeline.StatusRecord
	testenv.Eventually(p.t, 5*time.Second, 20*time.Millisecond, func() error {
		r, err := records.Reader{JS: p.js}.Find(p.ctx, callID)
		if err != nil {
			return err
		}
		if r == nil {
			return fmt.Errorf("no record of %s yet", callID)
		}
		rec = *r
		if !rec.Status.Terminal() {
			return fmt.Errorf("status %s not terminal yet", rec.Status)
		}
		return nil
	})
	return rec
}

func chat(rid, tool, args, finish string) []byte {
	a, _ := json.Marshal(args)
	return fmt.Appendf(nil, `{"id":%q,"object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_%s","type":"function","function":{"name":%q,"arguments":%s}}]},"finish_reason":%q}]}`,
		rid, rid, tool, a, finish)
}

const validInvoice = `{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":4900}]}`

func TestPipeline_valid_call_executes_once_through_every_gate(t *testing.T) {
	p := startPipeline(t)
	p.publish("resp-valid", "openai-chat", chat("resp-valid", "create_invoice", validInvoice, "tool_calls"))
	rs := p.waitResults("resp-valid", 1)
	if rs[0]["status"] != "executed" || rs[0]["ok"] != true {
		t.Fatalf("result %v, want executed", rs[0])
	}
	msg, _ := rs[0]["message"].(map[string]any)
	if msg["role"] != "tool" || msg["tool_call_id"] != "call_resp-valid" {
		t.Fatalf("tool-result message %v, want an OpenAI role:tool message for call_resp-valid", msg)
	}
	rec := p.status("resp-valid-0")
	var stages []string
	for _, s := range rec.History {
		stages = append(stages, s.Stage+":"+string(s.Status))
	}
	want := "accumulate:received parse:parsed validate:validated business:business_valid policy:approved execute:executed"
	if got := strings.Join(stages, " "); got != want {
		t.Fatalf("history %q, want %q", got, want)
	}
	if rec.IdempotencyKey == "" || rec.ToolRevision == 0 {
		t.Fatalf("status record lacks idempotency key or tool revision: %+v", rec)
	}
	if n := p.executed.Load(); n != 1 {
		t.Fatalf("executed %d times, want 1", n)
	}
}

func TestPipeline_same_response_published_twice_executes_once(t *testing.T) {
	p := startPipeline(t)
	body := chat("resp-dup", "create_invoice", validInvoice, "tool_calls")
	p.publish("resp-dup", "openai-chat", body)
	p.waitResults("resp-dup", 1)
	// Again, past the ingest de-duplication: a new message id, same response id.
	m := nats.NewMsg(streams.SubjectInResponse)
	m.Data = body
	m.Header.Set(streams.HeaderProvider, "openai-chat")
	m.Header.Set(streams.HeaderResponseID, "resp-dup")
	if _, err := p.js.PublishMsg(p.ctx, m); err != nil {
		t.Fatal(err)
	}
	// And once more with the original message id: the stream refuses it.
	m = nats.NewMsg(streams.SubjectInResponse)
	m.Data = body
	m.Header.Set(streams.HeaderProvider, "openai-chat")
	m.Header.Set(streams.HeaderResponseID, "resp-dup")
	if ack, err := p.js.PublishMsg(p.ctx, m, jetstream.WithMsgID("resp-dup")); err != nil || !ack.Duplicate {
		t.Fatalf("the original message id again: ack %+v, %v; want a duplicate", ack, err)
	}
	// The stored duplicate has run its course once every stage, in pipeline
	// order, has been delivered all it holds and acknowledged it: nothing is
	// left that could still execute.
	p.allSettled()
	if n := p.executed.Load(); n != 1 {
		t.Fatalf("executed %d times, want exactly 1", n)
	}
	rs := p.results("resp-dup")
	if len(rs) != 1 {
		t.Fatalf("%d results, want 1", len(rs))
	}
	for _, r := range rs {
		if r["status"] != "executed" {
			t.Fatalf("a duplicate ended %v, want executed (stored result)", r["status"])
		}
	}
}

func TestPipeline_truncated_arguments_never_execute_and_are_dead_lettered(t *testing.T) {
	p := startPipeline(t)
	cut := `{"customer_id":"cus_9821","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":49`
	p.publish("resp-cut", "openai-chat", chat("resp-cut", "create_invoice", cut, "length"))
	rs := p.waitResults("resp-cut", 1)
	if rs[0]["status"] != "failed" || rs[0]["failure"] != "truncated" {
		t.Fatalf("result %v, want failed/truncated", rs[0])
	}
	var dead []*jetstream.RawStreamMsg
	testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
		if dead = p.dlq(streams.DLQ("parse", "truncated")); len(dead) != 1 {
			return fmt.Errorf("%d dead letters", len(dead))
		}
		return nil
	})
	e, err := call.Unmarshal(dead[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	if e.RawArguments != cut {
		t.Fatalf("dead letter raw arguments %q, want the raw text %q", e.RawArguments, cut)
	}
	if p.executed.Load() != 0 {
		t.Fatal("a truncated call executed")
	}
}

func TestPipeline_schema_invalid_names_the_failing_path(t *testing.T) {
	p := startPipeline(t)
	bad := `{"customer_id":"cus_9821","currency":"YEN","line_items":[{"sku":"PRO-SEAT","quantity":0,"price_cents":4900}]}`
	p.publish("resp-schema", "openai-chat", chat("resp-schema", "create_invoice", bad, "tool_calls"))
	rs := p.waitResults("resp-schema", 1)
	if rs[0]["failure"] != "schema_invalid" {
		t.Fatalf("result %v, want schema_invalid", rs[0])
	}
	errs := fmt.Sprint(rs[0]["errors"])
	for _, path := range []string{"currency", "line_items/0/quantity"} {
		if !strings.Contains(errs, path) {
			t.Errorf("errors %s do not name %s", errs, path)
		}
	}
	if len(p.dlqAtLeast(streams.DLQ("validate", "schema_invalid"), 1)) != 1 {
		t.Error("no dead letter on toolgate.dlq.validate.schema_invalid")
	}
	if p.executed.Load() != 0 {
		t.Fatal("a schema-invalid call executed")
	}
}

func TestPipeline_bad_input_is_recorded_and_never_executed(t *testing.T) {
	p := startPipeline(t)
	// Over the body limit, within TOOLGATE_IN's header room: stored, and
	// refused by accumulate with its dead letter. Larger is refused at
	// publish (below).
	big := make([]byte, streams.InMaxBody+1)
	for i := range big {
		big[i] = 'x'
	}
	for _, c := range []struct {
		name, rid, provider string
		body                []byte
		status, dlq         string
	}{
		{"garbage", "bad-garbage", "openai-chat", []byte("\x00\xffnot json at all"), "rejected", "undecodable_response"},
		{"unknown_provider", "bad-provider", "acme-llm", chat("x", "get_weather", `{"city":"Paris"}`, "tool_calls"), "rejected", "unknown_provider"},
		{"no_provider_header", "bad-noheader", "", chat("x", "get_weather", `{"city":"Paris"}`, "tool_calls"), "rejected", "unknown_provider"},
		{"over_the_body_limit", "bad-big", "openai-chat", big, "rejected", "too_large"},
		{"no_tool_calls", "bad-none", "openai-chat", []byte(`{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}]}`), "no_tool_calls", ""},
		{"empty_arguments", "bad-empty", "openai-chat", chat("x", "create_invoice", ``, "tool_calls"), "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p.publish(c.rid, c.provider, c.body)
			rs := p.waitResults(c.rid, 1)
			if c.status != "" && rs[0]["status"] != c.status {
				t.Fatalf("status %v, want %s (%v)", rs[0]["status"], c.status, rs[0])
			}
			if rs[0]["ok"] == true && c.status != "no_tool_calls" {
				t.Fatalf("bad input ended ok: %v", rs[0])
			}
			if c.dlq != "" {
				testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
					for _, m := range p.dlq(streams.DLQ("accumulate", c.dlq)) {
						if m.Header.Get(streams.HeaderResponseID) == c.rid && len(m.Data) == len(c.body) {
							return nil
						}
					}
					return errors.New("input not kept in the dead-letter stream")
				})
			}
		})
	}
	// Ten megabytes could never become a call: TOOLGATE_IN refuses it when
	// published (streams.InMaxBody), the producer hears why, and nothing is
	// stored for the embedded server to hold.
	m := nats.NewMsg(streams.SubjectInResponse)
	m.Data = make([]byte, 10<<20)
	m.Header.Set(streams.HeaderProvider, "openai-chat")
	m.Header.Set(streams.HeaderResponseID, "bad-ten")
	if _, err := p.js.PublishMsg(p.ctx, m); !errors.Is(err, jetstream.ErrStreamMessageExceedsMaximum) {
		t.Fatalf("10 MiB published: %v, want refused for its size", err)
	}
	if n := p.executed.Load(); n != 0 {
		t.Fatalf("bad input executed %d calls", n)
	}
}

func TestPipeline_output_at_the_token_cap_is_flagged_even_when_the_provider_said_tool_calls(t *testing.T) {
	p := startPipeline(t)
	body := func(rid, args string) []byte {
		a, _ := json.Marshal(args)
		return fmt.Appendf(nil, `{"id":%q,"object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":%s}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":20,"completion_tokens":64,"total_tokens":84}}`, rid, a)
	}
	// Complete arguments at the cap are truncated too (issue 16): output
	// that hit the cap may have lost a sibling call or the end of the intent.
	p.publish("cap-ok", "openai-chat", body("cap-ok", `{"city":"Paris"}`), streams.HeaderMaxTokens, "64")
	rs := p.waitResults("cap-ok", 1)
	if rs[0]["failure"] != "truncated" || !strings.Contains(fmt.Sprint(rs[0]["errors"]), "max tokens") {
		t.Fatalf("%v: want failed/truncated naming the token cap", rs[0])
	}
	// Cut arguments at the cap are truncated and never run.
	p.publish("cap-cut", "openai-chat", body("cap-cut", `{"city":"Par`), streams.HeaderMaxTokens, "64")
	rs = p.waitResults("cap-cut", 1)
	if rs[0]["failure"] != "truncated" {
		t.Fatalf("%v: want failed/truncated", rs[0])
	}
	if p.executed.Load() != 0 {
		t.Fatalf("executed %d, want 0", p.executed.Load())
	}
}
