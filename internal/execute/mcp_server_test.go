package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/pkg/wire"
)

// The environment of the test binary run as a stdio MCP server: envMCPServer
// makes it one (TestMain); envMCPStatus makes it list the status tool;
// TOOLGATE_EXEC_PUBLIC_KEY (toolserver's discovery) makes it verify.
const (
	envMCPServer = "TOOLGATE_TEST_MCP_SERVER"
	envMCPStatus = "TOOLGATE_TEST_MCP_STATUS"
)

func TestMain(m *testing.M) {
	if os.Getenv(envMCPServer) == "1" {
		o := serverOpts{status: os.Getenv(envMCPStatus) == "1"}
		if os.Getenv("TOOLGATE_EXEC_PUBLIC_KEY") != "" {
			v, err := toolserver.NewMCPVerifier()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			o.verifier = v
		}
		if err := testMCPServer(o).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serverOpts shape testMCPServer: started, when not nil, hears of each call
// of hang, which blocks until its request ends or release is closed; with
// verifier it serves signed_echo; with status it lists toolgate_status.
type serverOpts struct {
	started  chan<- struct{}
	release  <-chan struct{}
	verifier *toolserver.MCPVerifier
	status   bool
}

// testMCPServer is a real MCP server with tools: echo (its arguments, as
// received, and the _meta it was given, as structured content), text (a
// text item), big (a structured result with a number past float64's
// digits), fail (isError), die (the process exits mid-call), hang,
// runs (how many times signed_echo ran), and as opts say signed_echo (echo
// behind toolserver.MCPVerifier, remembering each key's answer) and
// toolgate_status (answers from that memory, behind the verifier when there
// is one).
func testMCPServer(opts serverOpts) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "toolgate-test", Version: "1"}, nil)
	obj := &mcp.Tool{InputSchema: json.RawMessage(`{"type":"object"}`)}
	add := func(name string, h mcp.ToolHandler) {
		t := *obj
		t.Name = name
		s.AddTool(&t, h)
	}
	var (
		mu   sync.Mutex
		runs int
		seen = map[string]json.RawMessage{}
	)
	echoed := func(r *mcp.CallToolRequest) json.RawMessage {
		out, _ := json.Marshal(map[string]any{
			"arguments":     r.Params.Arguments,
			"arguments_raw": string(r.Params.Arguments), // a result's numbers come back as float64
			"key":           r.Params.Meta[MetaIdempotencyKey],
			"call_id":       r.Params.Meta[MetaCallID],
			"signature":     r.Params.Meta[MetaSignature],
			"pid":           os.Getpid(),
		})
		return out
	}
	refusal := func(name string, err error) *mcp.CallToolResult {
		text, meta := opts.verifier.Refusal(name, err)
		return &mcp.CallToolResult{IsError: true, Meta: meta, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	}
	add("echo", func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: echoed(r)}, nil
	})
	add("big", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"id": 12345678901234567891, "b": 1, "a": 2}`)}, nil
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
		if opts.started != nil {
			opts.started <- struct{}{}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-opts.release:
			return nil, errors.New("released")
		}
	})
	add("runs", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		return &mcp.CallToolResult{StructuredContent: map[string]int{"runs": runs}}, nil
	})
	if opts.verifier != nil {
		add("signed_echo", func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c, err := opts.verifier.Call(r.Params.Meta, r.Params.Name, r.Params.Arguments)
			if err != nil {
				return refusal(r.Params.Name, err), nil
			}
			out := echoed(r)
			mu.Lock()
			runs++
			seen[c.IdempotencyKey] = out
			mu.Unlock()
			return &mcp.CallToolResult{StructuredContent: out}, nil
		})
	}
	if opts.status {
		add(wire.MCPStatusTool, func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			key, _ := r.Params.Meta[MetaIdempotencyKey].(string)
			if opts.verifier != nil {
				c, err := opts.verifier.Status(r.Params.Meta, r.Params.Name, r.Params.Arguments)
				if err != nil {
					return refusal(r.Params.Name, err), nil
				}
				key = c.IdempotencyKey
			}
			mu.Lock()
			out, ok := seen[key]
			mu.Unlock()
			if !ok {
				return &mcp.CallToolResult{StructuredContent: wire.ExecStatusReply{Known: false}}, nil
			}
			return &mcp.CallToolResult{StructuredContent: wire.ExecStatusReply{Known: true, OK: true, Result: out}}, nil
		})
	}
	return s
}
