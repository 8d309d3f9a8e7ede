package execute

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/pkg/wire"
)

// maxListedTools bounds how many tools Status reads from a server's
// tools/list looking for the status tool (a hostile server may page on).
const maxListedTools = 10_000

// Status implements StatusQuerier. When the server lists the status tool
// (StatusTool, default wire.MCPStatusTool), Status calls it with
// {"idempotency_key": K, "tool": <Tool>}, signed as a status query (never
// as a call), and reads a StatusReply ({"known": ...}) from its
// structuredContent or its one text item. A server that does not list it,
// an isError answer, or an answer without "known" is ErrNoStatus: the
// gate then leaves the call outcome_unknown for an operator. It never calls
// Tool: a question must not run the call it asks about.
func (m *MCP) Status(ctx context.Context, req Request) (StatusReply, error) {
	name := m.StatusTool
	if name == "" {
		name = wire.MCPStatusTool
	}
	if name == m.Tool {
		return StatusReply{}, fmt.Errorf("%w: %s: the status tool %q is the tool itself", ErrNoStatus, m.where(), name)
	}
	args, err := json.Marshal(map[string]string{"idempotency_key": req.IdempotencyKey, "tool": m.Tool})
	if err != nil {
		return StatusReply{}, fmt.Errorf("%w: %v", ErrNoStatus, err)
	}
	params, err := m.params(req, name, QueryStatus, args)
	if err != nil {
		return StatusReply{}, fmt.Errorf("%w: %v", ErrNoStatus, err)
	}
	var res *mcp.CallToolResult
	err = m.session(ctx, func(cs *mcp.ClientSession) error {
		if err := lists(ctx, cs, name); err != nil {
			return err
		}
		var err error
		res, err = cs.CallTool(ctx, params)
		return err
	})
	if err != nil {
		return StatusReply{}, fmt.Errorf("%w: %s: %s: %v", ErrNoStatus, m.where(), name, err)
	}
	if res.IsError {
		msg := result.CutText(strings.TrimSpace(contentText(res.Content)), excerptMax)
		if reason, ok := refusedMeta(res.Meta); ok {
			return StatusReply{}, fmt.Errorf("%w: %w", ErrNoStatus, refused(m.where()+": tools/call "+name, reason, msg))
		}
		return StatusReply{}, fmt.Errorf("%w: %s: %s answered an error: %s", ErrNoStatus, m.where(), name, msg)
	}
	var body []byte
	switch {
	case res.StructuredContent != nil:
		body, _ = json.Marshal(res.StructuredContent)
	case len(res.Content) == 1:
		if t, ok := res.Content[0].(*mcp.TextContent); ok {
			body = []byte(t.Text)
		}
	}
	st, err := decodeStatus(body)
	if err != nil {
		return StatusReply{}, fmt.Errorf("%w (from %s %s)", err, m.where(), name)
	}
	limit := m.MaxResult
	if limit <= 0 {
		limit = DefaultMaxResult
	}
	if len(st.Result) > 0 {
		st.Result = result.Cut(st.Result, limit, result.ExcerptMax)
	}
	st.Error = result.CutText(st.Error, excerptMax)
	return st, nil
}

// lists reports whether the server lists tool name.
func lists(ctx context.Context, cs *mcp.ClientSession, name string) error {
	n := 0
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("tools/list: %v", err)
		}
		if t != nil && t.Name == name {
			return nil
		}
		if n++; n >= maxListedTools {
			break
		}
	}
	return fmt.Errorf("the server lists no tool %q: it cannot say whether a call happened", name)
}

// session runs f in a session with the server: the pool's for stdio, one
// of its own over streamable HTTP.
func (m *MCP) session(ctx context.Context, f func(*mcp.ClientSession) error) error {
	if m.Command != "" {
		if !slices.Contains(m.Commands, m.Command) {
			return fmt.Errorf("%w: mcp stdio command %q is not listed in --exec-mcp-commands", ErrDestination, m.Command)
		}
		pool := m.Pool
		if pool == nil {
			pool = &MCPPool{}
			defer pool.Close()
		}
		return pool.with(ctx, m.Command, m.Args, f)
	}
	cs, err := newMCPClient().Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: m.URL, HTTPClient: m.Allow.Client(), DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
	if err != nil {
		return fmt.Errorf("connecting (initialize): %w", unwrapURL(err))
	}
	defer closeLater(cs)
	return f(cs)
}

var _ StatusQuerier = (*MCP)(nil)
