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
// pointing at 127.0.0.1 is never reached, the call is not recorded as run,
// and once its deliveries run out it is dead-lettered naming the flag, for a
// replay after the operator lists the destination.
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
`, srv.URL+"/admin")
	settings := streams.DefaultSettings()
	settings.MaxDeliver = 3 // the refusal is retried, then dead-lettered: quickly here
	p := startRig(t, rig{files: map[string][]byte{"tools.yaml": exampleTools(t), "internal.yaml": []byte(internal)},
		configure: func(c *Config) { c.Settings = settings }})
	rid := "resp-ssrf"
	p.publish(rid, "openai-chat", chat(rid, "read_internal", `{"q":"all"}`, "tool_calls"))
	subj := "toolgate.dlq.execute.max_deliver" // its deliveries ran out; the error says why
	if err := testenv.Poll(30*time.Second, 100*time.Millisecond, func() error {
		if n := len(p.dlq(subj)); n != 1 {
			return fmt.Errorf("%d dead letters on %s, want 1", n, subj)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	dl := p.dlq(subj)[0]
	var letter call.Envelope
	if err := json.Unmarshal(dl.Data, &letter); err != nil {
		t.Fatal(err)
	}
	if e := strings.Join(letter.Errors, "; "); !strings.Contains(e, "--exec-allow") || !strings.Contains(e, "127.0.0.1") {
		t.Fatalf("dead letter errors %q: want them to name the destination and --exec-allow", e)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback service received %d requests, want 0", n)
	}
	if rec := p.status(rid + "-0"); rec.Status == call.Executed || rec.Status == call.ExecutionFailed {
		t.Fatalf("status %s: a call that never reached its tool is recorded as run", rec.Status)
	}
}
