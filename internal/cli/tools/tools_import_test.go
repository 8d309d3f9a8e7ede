package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/pkg/wire"
)

func TestToolsImport_mcp_prints_a_tools_file_with_the_server_as_executor(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "billing", Version: "1"}, nil)
	for _, name := range []string{"create_invoice", "billing.refund", wire.MCPStatusTool} {
		srv.AddTool(&mcp.Tool{Name: name, Description: "does " + name,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"}},"required":["amount"]}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()

	var out, errb bytes.Buffer
	if err := toolsWith([]string{"import", "--mcp", hs.URL}, ToolsIO{Out: &out, Err: &errb}); err != nil {
		t.Fatalf("import: %v (%s)", err, errb.String())
	}
	defs, err := tool.Load("imported.yaml", out.Bytes())
	if err != nil {
		t.Fatalf("the printed file does not load: %v\n%s", err, out.String())
	}
	got := map[string]tool.Executor{}
	for _, d := range defs {
		got[d.Name] = d.Executor
		if !strings.Contains(string(d.InputSchema), `"amount"`) {
			t.Errorf("%s: schema %s lost its properties", d.Name, d.InputSchema)
		}
	}
	if _, ok := got[wire.MCPStatusTool]; ok || len(got) != 2 {
		t.Errorf("imported %d tools, the server's %s among them: it answers toolgate, not the model", len(got), wire.MCPStatusTool)
	}
	if e := got["create_invoice"]; e.Type != "mcp" || e.URL != hs.URL || e.Tool != "" {
		t.Errorf("create_invoice executor %+v, want mcp at %s", e, hs.URL)
	}
	if e := got["billing_refund"]; e.Type != "mcp" || e.Tool != "billing.refund" {
		t.Errorf("billing.refund: %+v, want the name billing_refund calling MCP tool billing.refund\n%s", got, out.String())
	}
}

func TestToolsImport_without_mcp_is_a_usage_error(t *testing.T) {
	var out, errb bytes.Buffer
	err := toolsWith([]string{"import"}, ToolsIO{Out: &out, Err: &errb})
	if err == nil || !strings.Contains(err.Error(), "--mcp URL|COMMAND") {
		t.Fatalf("got %v", err)
	}
}
