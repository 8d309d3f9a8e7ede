package toolserver

import (
	"encoding/json"
	"errors"
	"os"

	"github.com/toolgate/toolgate/pkg/wire"
)

// MCPVerifier checks the execute gate's signature on the tools/call
// requests an MCP server receives (wire.VerifyMCP), with the same keys and
// options as New: PublicKey, else TOOLGATE_EXEC_PUBLIC_KEY, else
// .toolgate/secrets/exec-signing.pub; Lifetime, Skew, RequireExpiry;
// OnRefused; Insecure. It checks signatures only: the MCP server dedupes on
// the call's IdempotencyKey itself, durably, so a request is never run
// twice. It
// uses no MCP SDK; with the Go SDK, in a low-level tool handler:
//
//	c, err := v.Call(req.Params.Meta, req.Params.Name, req.Params.Arguments)
//	if err != nil {
//		text, meta := v.Refusal(req.Params.Name, err)
//		return &mcp.CallToolResult{IsError: true, Meta: meta, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
//	}
type MCPVerifier struct {
	opts options
}

// NewMCPVerifier fails when it has no public key (see PublicKey, Insecure).
func NewMCPVerifier(opts ...Option) (*MCPVerifier, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if len(o.keys) == 0 && !o.insecure {
		keys, err := discoverKeys(os.Getenv)
		if err != nil {
			return nil, err
		}
		o.keys = keys
	}
	return &MCPVerifier{opts: o}, nil
}

// Call checks a tools/call of tool name: meta is params._meta, arguments
// the exact bytes of params.arguments (CallToolParamsRaw.Arguments). It
// returns the call, whose IdempotencyKey the tool dedupes on, or the error
// to refuse it with (Refusal); the tool must not run then.
func (v *MCPVerifier) Call(meta map[string]any, name string, arguments []byte) (Call, error) {
	return v.check(meta, name, "", arguments)
}

// Status checks a call of the status tool (wire.MCPStatusTool): a request
// signed as a status query, never as a call, so that a tool call cannot be
// replayed as a question nor a question as a call.
func (v *MCPVerifier) Status(meta map[string]any, name string, arguments []byte) (Call, error) {
	return v.check(meta, name, wire.QueryStatus, arguments)
}

func (v *MCPVerifier) check(meta map[string]any, name, query string, arguments []byte) (Call, error) {
	c := Call{Arguments: json.RawMessage(arguments)}
	if v.opts.insecure {
		c.ID, _ = meta[wire.MCPMetaCallID].(string)
		c.IdempotencyKey, _ = meta[wire.MCPMetaIdempotencyKey].(string)
		return c, nil
	}
	r, err := wire.VerifyMCPWindow(meta, name, query, arguments, v.opts.window(), v.opts.keys...)
	if err != nil {
		return Call{}, err
	}
	c.ID, c.IdempotencyKey = r.CallID, r.IdempotencyKey
	return c, nil
}

// Refusal is what to answer a request refused with err: the text of the
// result and its _meta (wire.MCPMetaSignatureRefused), in a result with
// isError, which the execute gate takes for "not run". OnRefused hears of it.
func (v *MCPVerifier) Refusal(name string, err error) (text string, meta map[string]any) {
	if err == nil {
		err = errors.New("toolserver: refused")
	}
	if v.opts.onRefused != nil {
		v.opts.onRefused(name, err)
	}
	return "toolserver: refused, not run: " + err.Error(), wire.MCPRefusedMeta(err)
}
