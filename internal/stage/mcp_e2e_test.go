package stage

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/pkg/wire"
)

// The test binary is a stdio MCP server when envStageMCPServer is 1 (see
// init), writing a line for each tools/call it receives to the file named
// by envStageMCPLog.
const (
	envStageMCPServer = "TOOLGATE_TEST_STAGE_MCP_SERVER"
	envStageMCPLog    = "TOOLGATE_TEST_STAGE_MCP_LOG"
)

// init, not TestMain (another test's file): it runs first either way.
func init() {
	if os.Getenv(envStageMCPServer) != "1" {
		return
	}
	log, err := os.OpenFile(os.Getenv(envStageMCPLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var mu sync.Mutex
	srv := invoiceMCPServer(func(s seenCall) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.Marshal(s)
		_, _ = log.Write(append(b, '\n'))
	})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// seenCall is one tools/call as the MCP server received it.
type seenCall struct {
	Name   string `json:"name"`
	Key    string `json:"key"`
	CallID string `json:"call_id"`
}

// invoiceMCPServer serves invoices.create, answering the invoice it made
// for the call's idempotency key; seen hears of every tools/call received,
// before any handler.
func invoiceMCPServer(seen func(seenCall)) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "billing", Version: "1"}, nil)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				c := seenCall{}
				if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
					c.Name = p.Name
					c.Key, _ = p.Meta[wire.MCPMetaIdempotencyKey].(string)
					c.CallID, _ = p.Meta[wire.MCPMetaCallID].(string)
				}
				seen(c)
			}
			return next(ctx, method, req)
		}
	})
	s.AddTool(&mcp.Tool{Name: "invoices.create", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			key, _ := r.Params.Meta[wire.MCPMetaIdempotencyKey].(string)
			return &mcp.CallToolResult{StructuredContent: map[string]any{"invoice_id": "inv_mcp_1", "via": "mcp", "key": key}}, nil
		})
	return s
}

const mcpInvoiceTool = `
tools:
  - name: create_invoice_mcp
    description: Creates an invoice on the billing MCP server.
    input_schema: {type: object, properties: {amount: {type: integer}}, required: [amount]}
    executor: {type: mcp, %s, tool: invoices.create, timeout: 10s}
    policy: {risk: read}
`

// checkMCPPipeline publishes a response calling create_invoice_mcp through
// p and checks one executed result with the server's answer, and that
// seen (the server's tools/call, read when asked) holds exactly one call,
// carrying the call's idempotency key.
func checkMCPPipeline(t *testing.T, p *pipe, seen func() []seenCall) {
	rid := "resp-mcp"
	p.publish(rid, "openai-chat", chat(rid, "create_invoice_mcp", `{"amount":5}`, "tool_calls"))
	rs := p.waitResults(rid, 1)
	rec := p.status(rid + "-0")
	if rec.Status != call.Executed || rec.IdempotencyKey == "" {
		t.Fatalf("status %s (key %q), want executed with an idempotency key; errors %v", rec.Status, rec.IdempotencyKey, rec.Errors)
	}
	res, _ := json.Marshal(rs[0]["result"])
	var answer struct {
		InvoiceID string `json:"invoice_id"`
		Via       string `json:"via"`
		Key       string `json:"key"`
	}
	if err := json.Unmarshal(res, &answer); err != nil || rs[0]["status"] != "executed" || answer.InvoiceID != "inv_mcp_1" || answer.Via != "mcp" || answer.Key != rec.IdempotencyKey {
		t.Fatalf("result %v, want executed with the MCP server's answer for key %s", rs[0], rec.IdempotencyKey)
	}
	calls := seen()
	if len(calls) != 1 {
		t.Fatalf("the MCP server received %d tools/call, want exactly 1: %+v", len(calls), calls)
	}
	if c := calls[0]; c.Name != "invoices.create" || c.Key != rec.IdempotencyKey || c.CallID != rid+"-0" {
		t.Fatalf("the MCP server received %+v, want invoices.create with key %s and call id %s-0", c, rec.IdempotencyKey, rid)
	}
	if n := len(p.results(rid)); n != 1 {
		t.Fatalf("%d results for %s, want exactly 1", n, rid)
	}
}

func TestPipeline_mcp_executor_streamable_http_runs_once(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []seenCall
	)
	srv := invoiceMCPServer(func(c seenCall) { mu.Lock(); calls = append(calls, c); mu.Unlock() })
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	def := fmt.Sprintf(mcpInvoiceTool, fmt.Sprintf("url: %q", hs.URL))
	p := startRig(t, rig{files: map[string][]byte{"mcp.yaml": []byte(def)}, serve: []string{},
		configure: func(c *Config) { c.Exec.Allow = allowLoopback(t) }})
	checkMCPPipeline(t, p, func() []seenCall {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenCall(nil), calls...)
	})
}

func TestPipeline_mcp_executor_stdio_runs_once(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logPath := t.TempDir() + "/calls.jsonl"
	t.Setenv(envStageMCPServer, "1") // the execute stage's child inherits them
	t.Setenv(envStageMCPLog, logPath)
	def := fmt.Sprintf(mcpInvoiceTool, fmt.Sprintf("command: %q, args: [\"-test.run=^$\"]", self))
	p := startRig(t, rig{files: map[string][]byte{"mcp.yaml": []byte(def)}, serve: []string{},
		configure: func(c *Config) { c.Exec.MCPCommands = []string{self} }})
	checkMCPPipeline(t, p, func() []seenCall {
		data, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		var out []seenCall
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var c seenCall
			if err := json.Unmarshal([]byte(l), &c); err != nil {
				t.Fatalf("server log line %q: %v", l, err)
			}
			out = append(out, c)
		}
		return out
	})
}
