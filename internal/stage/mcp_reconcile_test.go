package stage

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/pkg/wire"
)

// lostAnswerServer is an MCP server whose invoices.create makes the invoice
// and then never answers (until the test ends), and which lists
// toolgate_status, answering from what it made, when status is set.
type lostAnswerServer struct {
	mu    sync.Mutex
	made  map[string]json.RawMessage // idempotency key -> the answer it never sent
	calls map[string]int             // tools/call received, by tool
}

func (l *lostAnswerServer) serve(t *testing.T, status bool) *httptest.Server {
	t.Helper()
	l.made, l.calls = map[string]json.RawMessage{}, map[string]int{}
	release := make(chan struct{})
	s := mcp.NewServer(&mcp.Implementation{Name: "billing", Version: "1"}, nil)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" {
				l.mu.Lock()
				l.calls[p.Name]++
				l.mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&mcp.Tool{Name: "invoices.create", InputSchema: obj}, func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		key, _ := r.Params.Meta[wire.MCPMetaIdempotencyKey].(string)
		l.mu.Lock()
		l.made[key] = json.RawMessage(fmt.Sprintf(`{"invoice_id":"inv_lost_1","key":%q}`, key))
		l.mu.Unlock()
		select { // the effect happened; the answer is lost
		case <-ctx.Done():
		case <-release:
		}
		return nil, context.Canceled
	})
	if status {
		s.AddTool(&mcp.Tool{Name: wire.MCPStatusTool, InputSchema: obj}, func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			key, _ := r.Params.Meta[wire.MCPMetaIdempotencyKey].(string)
			l.mu.Lock()
			res, ok := l.made[key]
			l.mu.Unlock()
			return &mcp.CallToolResult{StructuredContent: wire.ExecStatusReply{Known: ok, OK: ok, Result: res}}, nil
		})
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(release) }) // first: no handler outlives the test
	return hs
}

func (l *lostAnswerServer) received() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for k, v := range l.calls {
		out[k] = v
	}
	return out
}

const lostAnswerTool = `
tools:
  - name: create_invoice_mcp
    description: Creates an invoice on the billing MCP server.
    input_schema: {type: object, properties: {amount: {type: integer}}, required: [amount]}
    executor: {type: mcp, url: %q, tool: invoices.create, timeout: 1s}
    policy: {risk: read}
`

// lostAnswer runs the pipeline against l and publishes one call whose
// answer is lost; it returns the call's status record and its results.
func lostAnswer(t *testing.T, l *lostAnswerServer, status bool) (rec statusOf, results []map[string]any) {
	hs := l.serve(t, status)
	p := startRig(t, rig{files: map[string][]byte{"mcp.yaml": []byte(fmt.Sprintf(lostAnswerTool, hs.URL))}, serve: []string{},
		configure: func(c *Config) { c.Exec.Allow = allowLoopback(t) }})
	rid := "resp-lost"
	p.publish(rid, "openai-chat", chat(rid, "create_invoice_mcp", `{"amount":5}`, "tool_calls"))
	p.waitResults(rid, 1)
	r := p.status(rid + "-0")
	return statusOf{status: r.Status, key: r.IdempotencyKey, errors: r.Errors}, p.results(rid)
}

type statusOf struct {
	status call.Status
	key    string
	errors []string
}

// A lost answer from a server that lists toolgate_status is reconciled:
// executed with the answer the server kept, and the tool is not run again.
func TestPipeline_mcp_lost_answer_reconciled_by_the_status_tool(t *testing.T) {
	l := &lostAnswerServer{}
	rec, rs := lostAnswer(t, l, true)
	if rec.status != call.Executed || len(rs) != 1 || rs[0]["status"] != "executed" {
		t.Fatalf("status %s, results %v (errors %v): want one executed result, reconciled", rec.status, rs, rec.errors)
	}
	res, _ := json.Marshal(rs[0]["result"])
	var answer struct {
		InvoiceID string `json:"invoice_id"`
		Key       string `json:"key"`
	}
	if err := json.Unmarshal(res, &answer); err != nil || answer.InvoiceID != "inv_lost_1" || answer.Key != rec.key {
		t.Fatalf("result %s, want the answer the server kept for key %s", res, rec.key)
	}
	if got := l.received(); got["invoices.create"] != 1 || got[wire.MCPStatusTool] != 1 {
		t.Fatalf("the server received %v, want one invoices.create and one %s", got, wire.MCPStatusTool)
	}
}

// Without toolgate_status the call stays outcome_unknown for an operator,
// and the tool is never run again to find out.
func TestPipeline_mcp_lost_answer_without_a_status_tool_stays_unknown(t *testing.T) {
	l := &lostAnswerServer{}
	rec, rs := lostAnswer(t, l, false)
	if rec.status != call.OutcomeUnknown || len(rs) != 1 || rs[0]["status"] != "outcome_unknown" {
		t.Fatalf("status %s, results %v: want one outcome_unknown result", rec.status, rs)
	}
	if got := l.received(); got["invoices.create"] != 1 || len(got) != 1 {
		t.Fatalf("the server received %v, want exactly one invoices.create", got)
	}
}
