package stage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// Issue 13, "outputs that cannot be stored vanish": each input ends with
// exactly one recorded outcome per call — result stored, dead letter for a
// failure, terminal status record — its sibling call still executes, and a
// core subscriber of toolgate.results.<rid> receives each result once.

// coreResults counts what a core subscriber of toolgate.results.<rid>
// receives, by call id ("" for a response-level result).
type coreResults struct {
	mu sync.Mutex
	n  map[string]int
}

func (p *pipe) subscribeResults(rid string) *coreResults {
	p.t.Helper()
	c := &coreResults{n: map[string]int{}}
	sub, err := p.nc.Subscribe(streams.ResultsOf(rid), func(m *nats.Msg) {
		var r struct {
			CallID string `json:"call_id"`
		}
		_ = json.Unmarshal(m.Data, &r)
		c.mu.Lock()
		c.n[r.CallID]++
		c.mu.Unlock()
	})
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.nc.Flush(); err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { sub.Unsubscribe() })
	return c
}

// once fails unless the subscriber received exactly one result for each id.
// The subscription delivers on its own: it first waits until every id has
// one.
func (c *coreResults) once(t *testing.T, ids ...string) {
	t.Helper()
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, id := range ids {
			if c.n[id] == 0 {
				return fmt.Errorf("core subscriber has no result for %q yet", id)
			}
		}
		return nil
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if c.n[id] != 1 {
			t.Errorf("core subscriber received %d results for %q, want exactly 1 (all: %v)", c.n[id], id, c.n)
		}
	}
	if len(c.n) != len(ids) {
		t.Errorf("core subscriber received results for %v, want only %v", c.n, ids)
	}
}

// allSettled waits until no stage has anything pending or unacked.
func (p *pipe) allSettled() {
	p.t.Helper()
	for _, st := range streams.Names() {
		p.settled(st)
	}
}

// deadLettersOf returns the dead letters whose header h is v.
func (p *pipe) deadLettersOf(h, v string) []*nats.Msg {
	p.t.Helper()
	st, err := p.js.Stream(p.ctx, streams.StreamDLQ)
	if err != nil {
		p.t.Fatal(err)
	}
	info, err := st.Info(p.ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	var out []*nats.Msg
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(p.ctx, seq)
		if err != nil {
			continue
		}
		if m.Header.Get(h) == v {
			out = append(out, &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
		}
	}
	return out
}

func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestPipeline_70KB_tool_name_fails_no_such_tool_once_and_its_sibling_executes(t *testing.T) {
	p := startPipeline(t)
	rid := "resp-longname"
	core := p.subscribeResults(rid)
	long := strings.Repeat("n", 70<<10)
	p.publish(rid, "openai-chat", chatCalls(rid, toolCall{"get_weather", `{"city":"Paris"}`}, toolCall{long, `{"a":1}`}))
	rs := p.waitResults(rid, 2)
	p.allSettled()
	if rs = p.results(rid); len(rs) != 2 {
		t.Fatalf("%d results stored, want 2", len(rs))
	}
	for _, r := range rs {
		switch r["call_id"] {
		case rid + "-0":
			if r["status"] != "executed" {
				t.Fatalf("sibling ended %v, want executed", r["status"])
			}
		case rid + "-1":
			if r["ok"] != false || !strings.Contains(fmt.Sprint(r["status"], r["failure"]), "no_such_tool") {
				t.Fatalf("long-named call ended %v/%v, want no_such_tool", r["status"], r["failure"])
			}
		}
	}
	if rec := p.status(rid + "-1"); !rec.Status.Terminal() || rec.Status.OK() {
		t.Fatalf("status record %s, want a terminal failure", rec.Status)
	}
	dls := p.deadLettersOf(streams.HeaderCallID, rid+"-1")
	if len(dls) != 1 {
		t.Fatalf("%d dead letters for the long-named call, want 1", len(dls))
	}
	// An unregistered name leaves the process only hashed (issue 15), so
	// the 70 KB name shrinks to its hash on every header.
	if v := dls[0].Header.Get(streams.HeaderTool); v != "unregistered:"+sha256Hex([]byte(long))[:12] {
		t.Fatalf("Toolgate-Tool on the dead letter is %q (%d bytes), want unregistered:<12 hex of its sha256>", v[:min(len(v), 80)], len(v))
	}
	if e, err := call.Unmarshal(dls[0].Data); err != nil || e.ToolName != long {
		t.Fatalf("dead letter lost the tool name as the model wrote it (%v)", err)
	}
	if n := p.executed.Load(); n != 1 {
		t.Fatalf("tool ran %d times, want 1 (the sibling)", n)
	}
	core.once(t, rid+"-0", rid+"-1")
}

func TestPipeline_6MB_HTTP_answer_is_stored_once_cut_with_size_and_sha256(t *testing.T) {
	answer := []byte(`{"rows":"` + strings.Repeat("x", 6<<20) + `"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(answer) }))
	t.Cleanup(srv.Close)
	big := fmt.Sprintf(`
tools:
  - name: big_report
    description: A report that is far too large.
    input_schema: {type: object, properties: {q: {type: string}}, required: [q]}
    executor: {type: http, url: %q, timeout: 20s}
    policy: {risk: read}
`, srv.URL)
	p := startRig(t, rig{files: map[string][]byte{"tools.yaml": exampleTools(t), "big.yaml": []byte(big)},
		configure: func(c *Config) { c.Exec.Allow = allowLoopback(t) }})
	rid := "resp-bigresult"
	core := p.subscribeResults(rid)
	p.publish(rid, "openai-chat", chatCalls(rid, toolCall{"get_weather", `{"city":"Paris"}`}, toolCall{"big_report", `{"q":"all"}`}))
	p.waitResults(rid, 2)
	p.allSettled()
	rs := p.results(rid)
	if len(rs) != 2 {
		t.Fatalf("%d results stored, want 2", len(rs))
	}
	for _, r := range rs {
		if r["status"] != "executed" {
			t.Fatalf("%v ended %v, want executed", r["call_id"], r["status"])
		}
		if r["call_id"] != rid+"-1" {
			continue
		}
		raw, _ := json.Marshal(r["result"])
		c, cut := result.IsCut(raw)
		if !cut || c.Bytes != int64(len(answer)) || c.SHA256 != sha256Hex(answer) {
			t.Fatalf("result %.300s: want the cut form with %d bytes and the answer's sha256", raw, len(answer))
		}
		whole, _ := json.Marshal(r)
		ex, _ := json.Marshal(c.Excerpt)
		if n := strings.Count(string(whole), string(ex)); n != 1 {
			t.Fatalf("the excerpt appears %d times in the result message, want once", n)
		}
		if !strings.Contains(fmt.Sprint(r["text"]), c.SHA256) {
			t.Fatalf("text %q: want it to name the cut", r["text"])
		}
	}
	if rec := p.status(rid + "-1"); rec.Status != call.Executed {
		t.Fatalf("status record %s, want executed", rec.Status)
	}
	core.once(t, rid+"-0", rid+"-1")
}

func TestPipeline_8MB_provider_error_is_rejected_once_with_its_input_dead_lettered(t *testing.T) {
	p := startPipeline(t)
	rid := "resp-bigerror"
	core := p.subscribeResults(rid)
	msg, _ := json.Marshal(strings.Repeat("overloaded ", 700_000)) // 7.7 MB, under the 8 MiB body limit
	body := fmt.Appendf(nil, `{"error":{"type":"server_error","message":%s}}`, msg)
	p.publish(rid, "openai-chat", body)
	p.waitResults(rid, 1)
	p.allSettled()
	rs := p.results(rid)
	if len(rs) != 1 || rs[0]["status"] != "rejected" {
		t.Fatalf("results %d (%v), want one response-level rejected", len(rs), statuses(rs))
	}
	if text := fmt.Sprint(rs[0]["text"]); len(text) > 8<<10 || !strings.Contains(text, "cut by toolgate") {
		t.Fatalf("text is %d bytes: want the provider error cut, and the cut named", len(text))
	}
	dls := p.deadLettersOf(streams.HeaderResponseID, rid)
	if len(dls) != 1 || string(dls[0].Data) != string(body) {
		t.Fatalf("%d dead letters, want 1 holding the input as it arrived", len(dls))
	}
	core.once(t, "")
}

func TestPipeline_40KB_provider_header_is_rejected_once_with_its_input_dead_lettered(t *testing.T) {
	p := startPipeline(t)
	rid := "resp-bigheader"
	core := p.subscribeResults(rid)
	prov := strings.Repeat("p", 40<<10)
	body := chatCalls(rid, toolCall{"get_weather", `{"city":"Paris"}`})
	p.publish(rid, prov, body)
	p.waitResults(rid, 1)
	p.allSettled()
	rs := p.results(rid)
	if len(rs) != 1 || rs[0]["status"] != "rejected" || !strings.Contains(fmt.Sprint(rs[0]["text"]), "header Toolgate-Provider is 40960 bytes") {
		t.Fatalf("results %v, want one rejected naming the oversize header", rs)
	}
	dls := p.deadLettersOf(streams.HeaderResponseID, rid)
	if len(dls) != 1 || string(dls[0].Data) != string(body) || dls[0].Header.Get(streams.HeaderFailure) != "header_too_large" {
		t.Fatalf("%d dead letters, want 1 header_too_large holding the input", len(dls))
	}
	if v := dls[0].Header.Get(streams.HeaderProvider); len(v) > 1<<10 || !strings.Contains(v, sha256Hex([]byte(prov))) {
		t.Fatalf("provider header on the dead letter is %d bytes, want it cut naming the sha256", len(v))
	}
	if n := p.executed.Load(); n != 0 {
		t.Fatalf("tool ran %d times, want 0", n)
	}
	core.once(t, "")
}

func statuses(rs []map[string]any) []any {
	var out []any
	for _, r := range rs {
		out = append(out, r["status"])
	}
	return out
}

func TestPipeline_envelope_over_the_max_payload_ends_output_too_large_with_its_evidence(t *testing.T) {
	// nats-server's default 1 MiB max payload: 560 KB of arguments fit in
	// the provider body (840 KB, escaped in a JSON string) and the received
	// envelope, but not twice (raw and parsed) in the envelope parse hands
	// on, even in the hop encoding, which escapes nothing.
	p := startRig(t, rig{server: []func(*server.Options){func(o *server.Options) { o.MaxPayload = 1 << 20 }}})
	rid := "resp-bigargs"
	core := p.subscribeResults(rid)
	args := `{"city":"Paris","units":[` + strings.Repeat(`"a",`, 140_000) + `"a"]}`
	p.publish(rid, "openai-chat", chatCalls(rid, toolCall{"get_weather", `{"city":"Paris"}`}, toolCall{"get_weather", args}))
	p.waitResults(rid, 2)
	p.allSettled()
	rs := p.results(rid)
	if len(rs) != 2 {
		t.Fatalf("%d results stored, want 2", len(rs))
	}
	for _, r := range rs {
		switch r["call_id"] {
		case rid + "-0":
			if r["status"] != "executed" {
				t.Fatalf("sibling ended %v, want executed", r["status"])
			}
		case rid + "-1":
			if r["status"] != "failed" || r["failure"] != string(call.OutputTooLarge) {
				t.Fatalf("big call ended %v/%v, want failed/output_too_large", r["status"], r["failure"])
			}
		}
	}
	if rec := p.status(rid + "-1"); rec.Failure != call.OutputTooLarge || rec.ArgumentsHash != "sha256:"+sha256Hex([]byte(args)) {
		t.Fatalf("status record %s/%s hash %s: want output_too_large with the arguments' sha256", rec.Status, rec.Failure, rec.ArgumentsHash)
	}
	dls := p.deadLettersOf(streams.HeaderCallID, rid+"-1")
	if len(dls) != 1 || dls[0].Header.Get(streams.HeaderFailure) != string(call.OutputTooLarge) {
		t.Fatalf("%d dead letters, want 1 output_too_large", len(dls))
	}
	// The dead letter is the input envelope, which fits: the raw arguments
	// are kept exactly as the model wrote them.
	if e, err := call.Unmarshal(dls[0].Data); err != nil || e.RawArguments != args {
		t.Fatalf("dead letter raw arguments %.120s (%v): want them whole", e.RawArguments, err)
	}
	core.once(t, rid+"-0", rid+"-1")
}
