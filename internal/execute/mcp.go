package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/pkg/wire"
)

// The keys of a tools/call request's _meta: the call's idempotency key, its
// call id and the execute gate's signature (wire.MCPMeta*).
const (
	MetaIdempotencyKey = wire.MCPMetaIdempotencyKey
	MetaCallID         = wire.MCPMetaCallID
	MetaSignature      = wire.MCPMetaSignature
)

// MCP executes by calling Tool on an MCP server with tools/call: over
// streamable HTTP at URL (a session per call, dialled only where Allow
// permits), or over stdio to Command, started once and reused (Pool).
//
// The request's _meta carries the call's idempotency key and call id
// (MetaIdempotencyKey, MetaCallID) and, when Signer is set, the signature
// (MetaSignature: wire.SignExec over them, the MCP tool's name and the exact
// bytes of params.arguments). The answer, by what is known about the
// effect:
//   - a result: an ok call; its structuredContent, else its one text item
//     (as JSON when it is JSON), else its content list, is the result;
//   - a result with isError: a failed call with the text of its content,
//     unless its _meta says the server refused the signature
//     (wire.MCPMetaSignatureRefused): ErrNotRun wrapping ErrRefused;
//   - a JSON-RPC error answer (unknown tool, invalid params): a failed call;
//   - a failure before tools/call was sent (connecting, initialize, a
//     refused destination, a full or dead server): ErrNotRun;
//   - a failure after it was sent (the connection lost, the server exited,
//     the deadline hit while waiting): ErrUnknown.
type MCP struct {
	URL     string
	Command string
	Args    []string
	Tool    string        // the MCP tool's name
	Allow   *Destinations // HTTP: where it may connect; nil: nowhere
	Pool    *MCPPool      // stdio sessions; nil: a server started for this call alone
	// Commands are the stdio commands it may start (--exec-mcp-commands);
	// nil: none. Whoever may apply tools names the command, so the execute
	// stage runs only the ones its operator listed.
	Commands  []string
	MaxResult int     // bytes of a result kept whole; 0: DefaultMaxResult
	Signer    *Signer // signs every request; nil: unsigned
	// StatusTool is the tool Status calls when the server lists it;
	// "": wire.MCPStatusTool.
	StatusTool string
}

// Execute implements Executor.
func (m *MCP) Execute(ctx context.Context, req Request) (Reply, error) {
	args, err := mcpArguments(req.Arguments)
	if err != nil {
		return Reply{OK: false, Error: err.Error()}, nil
	}
	params, err := m.params(req, m.Tool, "", args)
	if err != nil {
		return Reply{}, err
	}
	var (
		res *mcp.CallToolResult
		f   *sentFlag
	)
	if m.Command != "" && !slices.Contains(m.Commands, m.Command) {
		return m.failed(m.where(), nil, fmt.Errorf("%w: mcp stdio command %q is not one the execute stage may start: list it in --exec-mcp-commands (TOOLGATE_EXEC_MCP_COMMANDS)", ErrDestination, m.Command))
	}
	if m.Command != "" {
		pool := m.Pool
		if pool == nil {
			pool = &MCPPool{}
			defer pool.Close()
		}
		res, f, err = pool.call(ctx, m.Command, m.Args, params)
	} else {
		res, f, err = m.callHTTP(ctx, params)
	}
	if err != nil {
		return m.failed(m.where(), f, err)
	}
	return m.reply(res, f)
}

// where names the server in errors.
func (m *MCP) where() string {
	if m.Command != "" {
		return "mcp stdio " + strings.Join(append([]string{m.Command}, m.Args...), " ")
	}
	return "mcp " + m.URL
}

// failed classifies a failed tools/call.
// f is nil when tools/call was never attempted.
func (m *MCP) failed(where string, f *sentFlag, err error) (Reply, error) {
	var rpc *jsonrpc.Error
	sent := f != nil && f.get()
	switch {
	case errors.As(err, &rpc) && f != nil && f.gotAnswer():
		return Reply{OK: false, Error: fmt.Sprintf("MCP error %d: %s", rpc.Code, result.CutText(rpc.Message, excerptMax))}, nil
	case errors.Is(err, ErrNotRun), errors.Is(err, ErrUnknown):
		return Reply{}, err
	case errors.Is(err, ErrDestination):
		return Reply{}, fmt.Errorf("%w: %s: %w", ErrNotRun, where, unwrapURL(err))
	case !sent:
		return Reply{}, fmt.Errorf("%w: %s: tools/call %s: %v", ErrNotRun, where, m.Tool, err)
	}
	return Reply{}, fmt.Errorf("%w: %s: tools/call %s sent, then %v", ErrUnknown, where, m.Tool, err)
}

// reply reads a tools/call result; f, when it holds the answer as the
// server wrote it, gives structuredContent digit for digit.
func (m *MCP) reply(res *mcp.CallToolResult, f *sentFlag) (Reply, error) {
	limit := m.MaxResult
	if limit <= 0 {
		limit = DefaultMaxResult
	}
	if res.IsError {
		msg := strings.TrimSpace(contentText(res.Content))
		if msg == "" {
			msg = "(no text)"
		}
		if reason, ok := refusedMeta(res.Meta); ok {
			return Reply{}, refused(m.where()+": tools/call "+m.Tool, reason, result.CutText(msg, excerptMax))
		}
		return Reply{OK: false, Error: "MCP tool error: " + result.CutText(msg, excerptMax)}, nil
	}
	var out []byte
	switch {
	case res.StructuredContent != nil:
		if out = f.structured(); out == nil {
			out, _ = json.Marshal(res.StructuredContent)
		}
	case len(res.Content) == 1:
		if t, ok := res.Content[0].(*mcp.TextContent); ok {
			out = textResult(t.Text)
			break
		}
		out, _ = json.Marshal(res.Content)
	case len(res.Content) > 1:
		out, _ = json.Marshal(res.Content)
	}
	if len(out) == 0 {
		return Reply{OK: true}, nil
	}
	return Reply{OK: true, Result: result.Cut(out, limit, result.ExcerptMax)}, nil
}

// contentText joins the text items of content.
func contentText(content []mcp.Content) string {
	var b strings.Builder
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// textResult is a text item as a result: JSON as it is, other text as a
// JSON string.
func textResult(text string) []byte {
	if b := []byte(strings.TrimSpace(text)); len(b) > 0 && json.Valid(b) {
		return b
	}
	out, _ := json.Marshal(text)
	return out
}
