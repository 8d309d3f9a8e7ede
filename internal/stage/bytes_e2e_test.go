package stage

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// received records what the executor was sent, per tool.
type received struct {
	mu   sync.Mutex
	args map[string][]string
}

func (r *received) rig() rig {
	r.args = map[string][]string{}
	return rig{
		serve: []string{"get_weather", "delete_customer_account"},
		exec: func(tool string, c toolserver.Call) (any, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.args[tool] = append(r.args[tool], string(c.Arguments))
			return map[string]any{"done": tool}, nil
		},
	}
}

func (r *received) get(tool string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.args[tool]...)
}

// dlqFor is every dead letter whose subject starts with prefix and that
// names callID (or, for input that never became a call, the response).
func (p *pipe) dlqFor(prefix, id string) []*jetstream.RawStreamMsg {
	p.t.Helper()
	st, err := p.js.Stream(p.ctx, streams.StreamDLQ)
	if err != nil {
		p.t.Fatal(err)
	}
	info, err := st.Info(p.ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(p.ctx, seq)
		if err != nil || !strings.HasPrefix(m.Subject, prefix) {
			continue
		}
		if strings.Contains(string(m.Data), `"call_id":"`+id+`"`) || m.Header.Get(streams.HeaderResponseID) == id {
			out = append(out, m)
		}
	}
	return out
}

// Arguments that are not UTF-8 — a raw invalid byte, a \ud800 the arguments
// string decodes to a lone surrogate, a \\ud800 escape inside the arguments
// JSON — end that call invalid_json with the byte offset; the tool never
// receives them, the dead letter keeps the exact bytes, and the sibling call
// with valid arguments executes. On the previous main the envelope's
// encoding/json turned the bytes into U+FFFD and all four calls executed.
func TestPipeline_arguments_not_utf8_are_invalid_json_and_the_sibling_executes(t *testing.T) {
	var got received
	p := startRig(t, got.rig())
	const rid = "resp-bytes"
	body := `{"id":"resp-bytes","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
		"{\"id\":\"c0\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Par\xffis\\\"}\"}}," +
		`{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"x\ud800\"}"}},` +
		`{"id":"c2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"\\ud800\"}"}},` +
		`{"id":"c3","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}]}`
	p.publish(rid, "openai-chat", []byte(body))
	rs := p.waitResults(rid, 4)
	byID := map[string]map[string]any{}
	for _, r := range rs {
		byID[fmt.Sprint(r["call_id"])] = r
	}
	raw := map[string]string{
		rid + "-0": "{\"city\":\"Par\xffis\"}",
		rid + "-1": "{\"city\":\"x\xed\xa0\x80\"}",
		rid + "-2": `{"city":"\ud800"}`,
	}
	for id, offset := range map[string]int{rid + "-0": 12, rid + "-1": 10, rid + "-2": 9} {
		r := byID[id]
		if r["status"] != "failed" || r["failure"] != "invalid_json" {
			t.Fatalf("%s: %v, want failed/invalid_json", id, r)
		}
		if errs := fmt.Sprint(r["errors"]); !strings.Contains(errs, fmt.Sprintf("(byte %d)", offset)) ||
			!strings.Contains(errs, "UTF-8") && !strings.Contains(errs, "lone surrogate") {
			t.Fatalf("%s: errors %s do not say why at byte %d", id, errs, offset)
		}
		var dead []*jetstream.RawStreamMsg
		testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
			if dead = p.dlqFor("toolgate.dlq.", id); len(dead) == 0 {
				return fmt.Errorf("no dead letter for %s", id)
			}
			return nil
		})
		e, err := call.Unmarshal(dead[0].Data)
		if err != nil {
			t.Fatal(err)
		}
		if e.RawArguments != raw[id] {
			t.Fatalf("%s: dead letter raw arguments %q, want the exact bytes %q", id, e.RawArguments, raw[id])
		}
	}
	if r := byID[rid+"-3"]; r["status"] != "executed" {
		t.Fatalf("sibling: %v, want executed", r)
	}
	if a := got.get("get_weather"); len(a) != 1 || a[0] != `{"city":"Paris"}` {
		t.Fatalf("the tool received %q, want only the valid sibling's arguments", a)
	}
}

// A key in another case is not the key: the call named get_weather runs as
// get_weather. A body naming "name" twice is refused as undecodable, with a
// result naming the key and its offset and the body kept as a dead letter.
// On the previous main encoding/json folded "NAME" onto name and the last
// one won: both responses were judged as delete_customer_account.
func TestPipeline_provider_keys_are_exact_and_duplicates_are_refused(t *testing.T) {
	var got received
	p := startRig(t, got.rig())
	folded := `{"id":"resp-case","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"c0","type":"function","function":{"name":"get_weather","NAME":"delete_customer_account","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}]}`
	p.publish("resp-case", "openai-chat", []byte(folded), streams.HeaderRoles, "admin")
	rs := p.waitResults("resp-case", 1)
	if rs[0]["status"] != "executed" || rs[0]["tool"] != "get_weather" {
		t.Fatalf("result %v, want get_weather executed", rs[0])
	}

	dup := `{"id":"resp-dupkey","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"c0","type":"function","function":{"name":"get_weather","name":"delete_customer_account","arguments":"{\"customer_id\":\"cus_1\",\"reason\":\"x\"}"}}]},"finish_reason":"tool_calls"}]}`
	p.publish("resp-dupkey", "openai-chat", []byte(dup), streams.HeaderRoles, "admin")
	rs = p.waitResults("resp-dupkey", 1)
	at := strings.LastIndex(dup, `"name":`)
	if errs := fmt.Sprint(rs[0]["errors"]); rs[0]["status"] != "rejected" ||
		!strings.Contains(errs, "undecodable_response") || !strings.Contains(errs, fmt.Sprintf(`duplicate key "name" at byte %d`, at)) {
		t.Fatalf("result %v, want rejected undecodable_response naming the duplicate key at byte %d", rs[0], at)
	}
	testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
		for _, m := range p.dlq(streams.DLQ("accumulate", "undecodable_response")) {
			if m.Header.Get(streams.HeaderResponseID) == "resp-dupkey" && string(m.Data) == dup {
				return nil
			}
		}
		return fmt.Errorf("the body is not kept as a dead letter")
	})
	if d := got.get("delete_customer_account"); len(d) != 0 {
		t.Fatalf("delete_customer_account received %q", d)
	}
	if w := got.get("get_weather"); len(w) != 1 {
		t.Fatalf("get_weather received %q, want the one exact-key call", w)
	}
}
