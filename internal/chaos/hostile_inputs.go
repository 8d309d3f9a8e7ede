package chaos

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/streams"
)

// expect is a response whose outcome a hostile input must leave recorded:
// a result for each listed call index, or (calls nil) any result or dead
// letter for the response; or, refused set, the error the producer got when
// TOOLGATE_IN refused the message for its size (nothing stored, so nothing
// else to record).
type expect struct {
	rid     string
	calls   []int
	refused string
}

// hostileInput is one of issue 13's inputs. send publishes it under rid (a
// fresh response id, the prefix of any further ones) and says what must be
// recorded for it.
type hostileInput struct {
	Name, What string
	send       func(ctx context.Context, a *attacker, rid string) ([]expect, string, error)
}

// HostileInputs names every hostile input, in the order they are published.
func HostileInputs() []string {
	all := hostileInputs()
	out := make([]string, len(all))
	for i, h := range all {
		out[i] = h.Name
	}
	return out
}

func selectInputs(names []string) ([]hostileInput, error) {
	if len(names) == 0 {
		return hostileInputs(), nil
	}
	all := hostileInputs()
	var out []hostileInput
	for _, n := range names {
		found := false
		for _, h := range all {
			if h.Name == n {
				out, found = append(out, h), true
			}
		}
		if !found {
			return nil, fmt.Errorf("chaos: unknown hostile input %q (known: %s)", n, strings.Join(HostileInputs(), ", "))
		}
	}
	return out, nil
}

// Stream events, OpenAI chat chunks: the first starts a get_weather call,
// the next continue its arguments, the terminal one ends the response.
func chunkStart(rid, args string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_%s","type":"function","function":{"name":"get_weather","arguments":%q}}]},"finish_reason":null}]}`, rid, rid, args)
}

func chunkMore(rid, args string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":%q}}]},"finish_reason":null}]}`, rid, args)
}

func chunkEnd(rid string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, rid)
}

// chatBody is a whole OpenAI chat completion whose tool_calls array is
// calls, written as raw JSON so hostile bytes stay as they are.
func chatBody(rid string, calls ...string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[%s]},"finish_reason":"tool_calls"}]}`, rid, strings.Join(calls, ","))
}

func chatCall(id, fn string) string {
	return fmt.Sprintf(`{"id":%q,"type":"function","function":%s}`, id, fn)
}

const weatherFn = `{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}`

// hostileInputs are the soak's inputs, in report order; each call returns a
// fresh slice.
func hostileInputs() []hostileInput {
	return []hostileInput{
		{Name: "seq-huge", What: "stream: seq 1, then Toolgate-Seq 4611686018427387904", send: func(ctx context.Context, a *attacker, rid string) ([]expect, string, error) {
			err := a.events(ctx, rid, []uint64{1, 4611686018427387904}, func(seq uint64) []byte {
				if seq == 1 {
					return chunkStart(rid, `{"city":`)
				}
				return chunkMore(rid, `"Paris"}`)
			})
			return []expect{{rid: rid}}, "", err
		}},
		{Name: "seq-30m", What: "stream: seq 1, then Toolgate-Seq 30000000", send: func(ctx context.Context, a *attacker, rid string) ([]expect, string, error) {
			err := a.events(ctx, rid, []uint64{1, 30_000_000}, func(seq uint64) []byte {
				if seq == 1 {
					return chunkStart(rid, `{"city":`)
				}
				return chunkMore(rid, `"Paris"}`)
			})
			return []expect{{rid: rid}}, "", err
		}},
		{Name: "kv-approval", What: `{"status":"approved"} put to $KV.toolgate_approvals.x-0`, send: func(ctx context.Context, a *attacker, rid string) ([]expect, string, error) {
			m := nats.NewMsg("$KV." + streams.BucketApprovals + ".x-0")
			m.Data = []byte(`{"status":"approved"}`)
			return nil, "", publishRetry(ctx, a.js, m, rid+":kv", time.Minute)
		}},
		{Name: "gap-terminals", What: "stream: seq 1, then 2,000 terminal events behind a gap (seq 2 never sent)", send: func(ctx context.Context, a *attacker, rid string) ([]expect, string, error) {
			seqs := []uint64{1}
			for s := uint64(3); s < 2003; s++ {
				seqs = append(seqs, s)
			}
			err := a.events(ctx, rid, seqs, func(seq uint64) []byte {
				if seq == 1 {
					return chunkStart(rid, `{"city":"Paris"}`)
				}
				return chunkEnd(rid)
			})
			return []expect{{rid: rid}}, "", err
		}},
		{Name: "big-events", What: "streams of one huge event each", send: func(ctx context.Context, a *attacker, rid string) ([]expect, string, error) {
			size := a.cfg.BigEventSize
			note := ""
			if lim := int(a.nc.MaxPayload()) - 64<<10; size > lim {
				size, note = lim, fmt.Sprintf("server max payload %d: events cut to %d bytes", a.nc.MaxPayload(), lim)
			}
			var exp []expect
			for k := range a.cfg.BigEvents {
				r := rid + "-" + strconv.Itoa(k)
				head := chunkStart(r, "")
				args := `{"city":"` + strings.Repeat("a", max(size-len(head)-16, 0))
				err := a.events(ctx, r, []uint64{1}, func(uint64) []byte { return chunkStart(r, args) })
				switch {
				case errors.Is(err, jetstream.ErrStreamMessageExceedsMaximum):
					// Over the body limit with its headers: refused when
					// published (streams.InMaxBody), never stored.
					exp = append(exp, expect{rid: r, refused: err.Error()})
					continue
				case err != nil:
					return exp, note, err
				}
				exp = append(exp, expect{rid: r})
			}
			if note == "" {
				note = fmt.Sprintf("%d streams × %s", a.cfg.BigEvents, mib(int64(size)))
			}
			return exp, note, nil
		}},
		{Name: "tool-name-70k", What: "a 70 KB tool name (call 0) beside a valid get_weather (call 1)", send: func(ctx context.Context, a *attacker, rid string) ([]expect, string, error) {
			name := strings.Repeat("n", 70<<10)
			body := chatBody(rid, chatCall("call_a", fmt.Sprintf(`{"name":%q,"arguments":"{}"}`, name)), chatCall("call_b", weatherFn))
			return []expect{{rid: rid, calls: []int{0, 1}}}, "", a.response(ctx, rid, "openai-chat", body)
		}},
		{Name: "http-6mb", What: "a call to an HTTP tool that answers 6 MB", send: func(ctx context.Context, a *attacker, rid string) ([]expect, string, error) {
			body := chatBody(rid, chatCall("call_a", `{"name":"`+BigAnswerTool+`","arguments":"{\"q\":\"all\"}"}`))
			return []expect{{rid: rid, calls: []int{0}}}, "", a.response(ctx, rid, "openai-chat", body)
		}},
		{Name: "provider-error-8mb", What: "an 8 MB provider error body", send: func(ctx context.Context, a *attacker, rid string) ([]expect, string, error) {
			size, note := 8<<20, ""
			if lim := int(a.nc.MaxPayload()) - 64<<10; size > lim {
				size, note = lim, fmt.Sprintf("server max payload %d: body cut to %d bytes", a.nc.MaxPayload(), lim)
			}
			msg := strings.Repeat("e", size-100)
			body := fmt.Appendf(nil, `{"error":{"message":%q,"type":"server_error","code":"overloaded"}}`, msg)
			return []expect{{rid: rid}}, note, a.response(ctx, rid, "openai-chat", body)
		}},
		{Name: "provider-header-40k", What: "a 40 KB Toolgate-Provider header", send: func(ctx context.Context, a *attacker, rid string) ([]expect, string, error) {
			body := chatBody(rid, chatCall("call_a", weatherFn))
			return []expect{{rid: rid}}, "", a.response(ctx, rid, strings.Repeat("p", 40<<10), body)
		}},
		{Name: "utf8-invalid", What: "arguments with a raw 0xFF byte (not UTF-8)", send: func(ctx context.Context, a *attacker, rid string) ([]expect, string, error) {
			body := chatBody(rid, chatCall("call_a", "{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Par\xffis\\\"}\"}"))
			return []expect{{rid: rid, calls: []int{0}}}, "", a.response(ctx, rid, "openai-chat", body)
		}},
		{Name: "utf8-surrogate", What: `arguments {"city":"Paris \ud800"} (a lone surrogate escape, Anthropic input)`, send: func(ctx context.Context, a *attacker, rid string) ([]expect, string, error) {
			body := fmt.Appendf(nil, `{"id":%q,"type":"message","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris \ud800"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":20}}`, rid)
			return []expect{{rid: rid, calls: []int{0}}}, "", a.response(ctx, rid, "anthropic", body)
		}},
		{Name: "utf8-surrogate-string", What: `OpenAI arguments string holding \ud800 (decodes to a lone surrogate)`, send: func(ctx context.Context, a *attacker, rid string) ([]expect, string, error) {
			body := chatBody(rid, chatCall("call_a", `{"name":"get_weather","arguments":"{\"city\":\"Paris \ud800\"}"}`))
			return []expect{{rid: rid, calls: []int{0}}}, "", a.response(ctx, rid, "openai-chat", body)
		}},
		{Name: "key-case", What: `"name":"get_weather","NAME":"delete_customer_account"`, send: func(ctx context.Context, a *attacker, rid string) ([]expect, string, error) {
			body := chatBody(rid, chatCall("call_a", `{"name":"get_weather","NAME":"delete_customer_account","arguments":"{\"city\":\"Paris\"}"}`))
			return []expect{{rid: rid, calls: []int{0}}}, "", a.response(ctx, rid, "openai-chat", body)
		}},
	}
}

// kvWatch is how long the soak watches the child after the key-value put:
// two sweeps of the approval sweeper (every 5s).
const kvWatch = 11 * time.Second

// attacker publishes hostile inputs, spread over the attack phase.
type attacker struct {
	js     jetstream.JetStream
	nc     *nats.Conn
	prefix string
	cfg    HostileConfig
	ch     *child
	logf   func(string, ...any)
	begin  time.Time

	sent []sentInput
}

// sentInput is one published hostile input and what it must leave.
type sentInput struct {
	in      hostileInput
	rid     string
	at      time.Duration
	expects []expect
	note    string
	err     error
}

func newAttacker(js jetstream.JetStream, nc *nats.Conn, prefix string, cfg HostileConfig, ch *child, logf func(string, ...any)) *attacker {
	return &attacker{js: js, nc: nc, prefix: prefix, cfg: cfg, ch: ch, logf: logf}
}

// run publishes each input at an even share of d, in order.
func (a *attacker) run(ctx context.Context, inputs []hostileInput, d time.Duration) {
	a.begin = time.Now()
	step := d / time.Duration(len(inputs)+1)
	for i, in := range inputs {
		if w := time.Until(a.begin.Add(time.Duration(i+1) * step)); w > 0 {
			select {
			case <-time.After(w):
			case <-ctx.Done():
				return
			}
		}
		rid := a.prefix + "-" + in.Name
		a.ch.published(in.Name)
		t0 := time.Now()
		exp, note, err := in.send(ctx, a, rid)
		a.sent = append(a.sent, sentInput{in: in, rid: rid, at: time.Since(a.ch.begin), expects: exp, note: note, err: err})
		if err != nil {
			a.logf("hostile %s: publish: %v", in.Name, err)
		} else {
			a.logf("hostile %s published (%v)", in.Name, time.Since(t0).Round(time.Millisecond))
		}
	}
}

// events publishes one stream event per seq on toolgate.in.stream.<rid>.
func (a *attacker) events(ctx context.Context, rid string, seqs []uint64, body func(seq uint64) []byte) error {
	for _, s := range seqs {
		m := nats.NewMsg(streams.InStream(rid))
		m.Data = body(s)
		m.Header.Set(streams.HeaderProvider, "openai-chat")
		m.Header.Set(streams.HeaderResponseID, rid)
		m.Header.Set(streams.HeaderSeq, strconv.FormatUint(s, 10))
		if err := publishRetry(ctx, a.js, m, rid+":"+strconv.FormatUint(s, 10), time.Minute); err != nil {
			return fmt.Errorf("event seq %d: %w", s, err)
		}
	}
	return nil
}

// response publishes one whole response body on toolgate.in.response.
func (a *attacker) response(ctx context.Context, rid, prov string, body []byte) error {
	m := nats.NewMsg(streams.SubjectInResponse)
	m.Data = body
	m.Header.Set(streams.HeaderProvider, prov)
	m.Header.Set(streams.HeaderResponseID, rid)
	return publishRetry(ctx, a.js, m, rid, time.Minute)
}

// unsettled names the published inputs whose outcome is not recorded yet.
func (a *attacker) unsettled(rs *resultSet) []string {
	var out []string
	for _, s := range a.sent {
		if s.in.Name == "kv-approval" && time.Since(a.ch.begin)-s.at < kvWatch {
			out = append(out, s.in.Name) // until the sweeper has read the record twice
			continue
		}
		for _, e := range s.expects {
			if !e.settled(rs) {
				out = append(out, s.in.Name)
				break
			}
		}
	}
	return out
}

// settled: refused at publish, a result for each listed call, or any
// result for the response. (Dead letters are read once at the end; a
// response-level input whose only evidence is a dead letter is judged
// there.)
func (e expect) settled(rs *resultSet) bool {
	if e.refused != "" {
		return true
	}
	got := rs.byRID(e.rid)
	if e.calls == nil {
		return len(got) > 0
	}
	for _, i := range e.calls {
		found := false
		for _, r := range got {
			found = found || r.CallID == e.rid+"-"+strconv.Itoa(i)
		}
		if !found {
			return false
		}
	}
	return true
}
