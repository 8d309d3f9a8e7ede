package execute

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/pkg/wire"
)

// mcpArguments is the exact params.arguments a tools/call sends for raw:
// the object as encoding/json writes a json.RawMessage (compact, <, > and &
// escaped), which the SDK's encoding leaves as it is, so the bytes signed
// are the bytes the server receives. Numbers keep every digit (a decoded
// map would have made them float64). No arguments are {}.
func mcpArguments(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage(`{}`), nil
	}
	if raw[0] != '{' || !json.Valid(raw) {
		return nil, errors.New("mcp: the arguments are not a JSON object")
	}
	out, err := json.Marshal(raw)
	if err != nil {
		return nil, errors.New("mcp: the arguments are not a JSON object: " + err.Error())
	}
	return out, nil
}

// params is the tools/call of tool name for req with args (mcpArguments),
// its _meta carrying the idempotency key, the call id and, with a Signer,
// the signature over them, name, query and args.
func (m *MCP) params(req Request, name, query string, args json.RawMessage) (*mcp.CallToolParams, error) {
	meta := mcp.Meta{MetaIdempotencyKey: req.IdempotencyKey, MetaCallID: req.CallID}
	sig, err := m.Signer.header(Request{Tool: name, CallID: req.CallID, IdempotencyKey: req.IdempotencyKey}, query, args, 0)
	if err != nil {
		return nil, err
	}
	if sig != "" {
		meta[MetaSignature] = sig
	}
	return &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta}, nil
}

// refusedMeta reads a result's wire.MCPMetaSignatureRefused: the reason
// the server refused the signature, cut short (the server's words).
func refusedMeta(meta mcp.Meta) (string, bool) {
	r, ok := meta[wire.MCPMetaSignatureRefused].(string)
	if !ok || r == "" {
		return "", false
	}
	return result.CutText(r, 64), true
}
