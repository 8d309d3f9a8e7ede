package stage

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/toolserver"
)

// signedMCPServer serves invoices.create behind toolserver.MCPVerifier with
// keys; runs counts the handler's runs past the check.
func signedMCPServer(t *testing.T, runs *atomic.Int32, keys toolserver.Option) *httptest.Server {
	t.Helper()
	v, err := toolserver.NewMCPVerifier(keys)
	if err != nil {
		t.Fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "billing", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "invoices.create", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c, err := v.Call(r.Params.Meta, r.Params.Name, r.Params.Arguments)
			if err != nil {
				text, meta := v.Refusal(r.Params.Name, err)
				return &mcp.CallToolResult{IsError: true, Meta: meta, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
			}
			runs.Add(1)
			return &mcp.CallToolResult{StructuredContent: map[string]any{"invoice_id": "inv_signed", "key": c.IdempotencyKey}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs
}

// The execute stage signs its MCP requests with its executor key: a server
// verifying with that key runs the call; one trusting another key refuses
// it, and the call ends at once with one dead letter (a retry signed with
// the same key cannot pass), never recorded as run.
func TestPipeline_mcp_executor_requests_are_signed(t *testing.T) {
	t.Run("verified_and_run", func(t *testing.T) {
		var runs atomic.Int32
		hs := signedMCPServer(t, &runs, testExecKey())
		p := startRig(t, rig{files: map[string][]byte{"mcp.yaml": []byte(fmt.Sprintf(mcpInvoiceTool, fmt.Sprintf("url: %q", hs.URL)))}, serve: []string{},
			configure: func(c *Config) { c.Exec.Allow = allowLoopback(t) }})
		p.publish("resp-signed", "openai-chat", chat("resp-signed", "create_invoice_mcp", `{"amount":5}`, "tool_calls"))
		p.waitResults("resp-signed", 1)
		if rec := p.status("resp-signed-0"); rec.Status != call.Executed || runs.Load() != 1 {
			t.Fatalf("status %s (%v), %d runs: want executed once", rec.Status, rec.Errors, runs.Load())
		}
	})
	t.Run("another_key_is_refused_never_run", func(t *testing.T) {
		var runs atomic.Int32
		other, err := execute.GenerateSigner()
		if err != nil {
			t.Fatal(err)
		}
		hs := signedMCPServer(t, &runs, toolserver.PublicKey(other.Public()...))
		p := startRig(t, rig{files: map[string][]byte{"mcp.yaml": []byte(fmt.Sprintf(mcpInvoiceTool, fmt.Sprintf("url: %q", hs.URL)))}, serve: []string{},
			configure: func(c *Config) { c.Exec.Allow = allowLoopback(t) }})
		p.publish("resp-forged", "openai-chat", chat("resp-forged", "create_invoice_mcp", `{"amount":5}`, "tool_calls"))
		testenv.Eventually(t, 30*time.Second, 100*time.Millisecond, func() error {
			if n := len(p.dlq("toolgate.dlq.execute.executor_signature_refused")); n != 1 {
				return fmt.Errorf("%d dead letters, want 1", n)
			}
			return nil
		})
		if n := runs.Load(); n != 0 {
			t.Fatalf("the server ran %d calls signed by a key it does not trust", n)
		}
	})
}
