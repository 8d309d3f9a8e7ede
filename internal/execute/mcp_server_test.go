package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// envMCPServer makes the test binary an MCP stdio server (TestMain).
const envMCPServer = "TOOLGATE_TEST_MCP_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(envMCPServer) == "1" {
		err := testMCPServer(nil, nil).Run(context.Background(), &mcp.StdioTransport{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testMCPServer is a real MCP server with tools: echo (its arguments and
// the _meta it was given, as structured content), text (a text item),
// fail (isError), die (the process exits mid-call), hang (blocks until its
// request ends or release is closed; started, when not nil, hears of each call).
func testMCPServer(started chan<- struct{}, release <-chan struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "toolgate-test", Version: "1"}, nil)
	obj := &mcp.Tool{InputSchema: json.RawMessage(`{"type":"object"}`)}
	add := func(name string, h mcp.ToolHandler) {
		t := *obj
		t.Name = name
		s.AddTool(&t, h)
	}
	add("echo", func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: map[string]any{
			"arguments": r.Params.Arguments,
			"key":       r.Params.Meta[MetaIdempotencyKey],
			"call_id":   r.Params.Meta[MetaCallID],
			"pid":       os.Getpid(),
		}}, nil
	})
	add("text", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "invoice inv_1 sent"}}}, nil
	})
	add("fail", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "card declined"}}}, nil
	})
	add("die", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	add("hang", func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if started != nil {
			started <- struct{}{}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return nil, errors.New("released")
		}
	})
	return s
}
