package stage

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// The finding: `tools apply` took an HTTP executor URL of anyone's choosing
// and the execute stage POSTed to it (loopback, the cloud metadata address,
// the private network) and kept up to 16 MiB of the answer in the results.
// Now the execute stage dials only what its --exec-allow lists: a tool
// pointing at 127.0.0.1 (over HTTP or MCP) is never reached, the call is not
// recorded as run, and it ends at once — delivered once, not retried ten
// times over ~90 s, since no retry can reach a refused destination — with
// its result and exactly one dead letter naming the flag, for a replay
// after the operator lists the destination.
func TestTrust_http_executor_refused_destination_is_dead_lettered_never_reached(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"ok":true,"result":"internal data"}`))
	}))
	t.Cleanup(srv.Close)
	internal := fmt.Sprintf(`
tools:
  - name: read_internal
    description: Points at a loopback service.
    input_schema: {type: object, properties: {q: {type: string}}, required: [q]}
    executor: {type: http, url: %q, timeout: 5s}
    policy: {risk: read}
  - name: read_internal_mcp
    description: Points at a loopback MCP server.
    input_schema: {type: object, properties: {q: {type: string}}, required: [q]}
    executor: {type: mcp, url: %q, timeout: 5s}
    policy: {risk: read}
`, srv.URL+"/admin", srv.URL+"/mcp")
	p := startRig(t, rig{files: map[string][]byte{"tools.yaml": exampleTools(t), "internal.yaml": []byte(internal)}})
	subj := "toolgate.dlq.execute.executor_destination_refused"
	for i, tool := range []string{"read_internal", "read_internal_mcp"} {
		rid := "resp-ssrf-" + tool
		p.publish(rid, "openai-chat", chat(rid, tool, `{"q":"all"}`, "tool_calls"))
		res := p.waitResults(rid, 1)
		if res[0]["status"] != string(call.Failed) {
			t.Fatalf("%s: result %v, want the call failed", tool, res[0])
		}
		// The dead letter is stored on its own stream, after the result.
		var letters []call.Envelope
		testenv.Eventually(t, 5*time.Second, 20*time.Millisecond, func() error {
			letters = nil
			for _, m := range p.dlq(subj) {
				var e call.Envelope
				if err := json.Unmarshal(m.Data, &e); err != nil {
					t.Fatal(err)
				}
				if e.ToolName == tool {
					letters = append(letters, e)
				}
			}
			if len(letters) == 0 {
				return fmt.Errorf("%s: no dead letter on %s yet", tool, subj)
			}
			return nil
		})
		if len(letters) != 1 {
			t.Fatalf("%s: %d dead letters on %s, want exactly 1", tool, len(letters), subj)
		}
		if e := strings.Join(letters[0].Errors, "; "); !strings.Contains(e, "--exec-allow") || !strings.Contains(e, "127.0.0.1") {
			t.Fatalf("%s: dead letter errors %q: want them to name the destination and --exec-allow", tool, e)
		}
		// Delivered once: the execute consumer handed out one message per
		// call so far, none of them again.
		// Each tool is an executor group of its own: count every group's.
		var delivered uint64
		var redelivered int
		st, err := p.js.Stream(p.ctx, streams.StreamExecute)
		if err != nil {
			t.Fatal(err)
		}
		for name := range st.ConsumerNames(p.ctx).Name() {
			c, err := p.js.Consumer(p.ctx, streams.StreamExecute, name)
			if err != nil {
				t.Fatal(err)
			}
			info, err := c.Info(p.ctx)
			if err != nil {
				t.Fatal(err)
			}
			delivered, redelivered = delivered+info.Delivered.Consumer, redelivered+info.NumRedelivered
		}
		if delivered != uint64(i+1) || redelivered != 0 {
			t.Fatalf("%s: the execute consumers delivered %d times for %d calls (%d redelivered), want each call delivered once", tool, delivered, i+1, redelivered)
		}
		if rec := p.status(rid + "-0"); rec.Status == call.Executed || rec.Status == call.ExecutionFailed {
			t.Fatalf("%s: status %s: a call that never reached its tool is recorded as run", tool, rec.Status)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback service received %d requests, want 0", n)
	}
	if n := len(p.dlq("toolgate.dlq.execute.max_deliver")); n != 0 {
		t.Fatalf("%d dead letters for running out of deliveries, want none", n)
	}
}
