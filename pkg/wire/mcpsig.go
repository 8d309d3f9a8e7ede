package wire

import (
	"crypto/ed25519"
	"fmt"
	"time"
)

// MCP executors: the execute gate's tools/call requests carry in their
// _meta what HTTP and NATS requests carry in headers. The key names follow
// MCP's _meta rules (a reverse-DNS prefix, toolgate.github.io's).
const (
	// MCPMetaIdempotencyKey is the call's idempotency key: dedupe on it.
	MCPMetaIdempotencyKey = "io.github.toolgate/idempotency_key"
	// MCPMetaCallID is toolgate's call id.
	MCPMetaCallID = "io.github.toolgate/call_id"
	// MCPMetaSignature is the Toolgate-Signature value (SignExec) over the
	// call id, idempotency key, the tools/call name, the query ("" for a
	// call, QueryStatus for a status query) and the exact bytes of
	// params.arguments.
	MCPMetaSignature = "io.github.toolgate/signature"
	// MCPMetaSignatureRefused, in the _meta of a result with isError, says
	// the server refused the request's signature and did not run it; its
	// value is the reason (Refused*).
	MCPMetaSignatureRefused = "io.github.toolgate/signature_refused"
	// MCPStatusTool is the tool an MCP executor calls to ask whether a call
	// happened, when the server lists it: arguments {"idempotency_key": K,
	// "tool": <the tool asked about>}, the answer an ExecStatusReply as
	// structuredContent (or as the one text item).
	MCPStatusTool = "toolgate_status"
)

// VerifyMCP checks the signature of a tools/call request: meta is its
// params._meta, name its params.name, arguments the exact bytes of its
// params.arguments as received (the Go SDK's CallToolParamsRaw.Arguments),
// query "" for a tool or QueryStatus for the status tool. It returns what
// was signed, or an error as VerifyExec's (RefusedReason names it). A
// missing or non-string _meta field is unsigned or malformed, never a crash.
func VerifyMCP(meta map[string]any, name, query string, arguments []byte, now time.Time, tolerance time.Duration, keys ...ed25519.PublicKey) (ExecRequest, error) {
	return verifyMCP(meta, name, query, arguments, func(header string, r ExecRequest) error { return VerifyExec(header, r, now, tolerance, keys...) })
}

// VerifyMCPWindow is VerifyMCP in window w (VerifyExecWindow).
func VerifyMCPWindow(meta map[string]any, name, query string, arguments []byte, w ExecWindow, keys ...ed25519.PublicKey) (ExecRequest, error) {
	return verifyMCP(meta, name, query, arguments, func(header string, r ExecRequest) error { return VerifyExecWindow(header, r, w, keys...) })
}

func verifyMCP(meta map[string]any, name, query string, arguments []byte, verify func(string, ExecRequest) error) (ExecRequest, error) {
	sig, present := meta[MCPMetaSignature]
	if !present || sig == nil || sig == "" {
		return ExecRequest{}, fmt.Errorf("%w (no _meta %q)", ErrExecUnsigned, MCPMetaSignature)
	}
	header, ok := sig.(string)
	if !ok {
		return ExecRequest{}, fmt.Errorf("%w: _meta %q is a %T, not a string", ErrExecMalformed, MCPMetaSignature, sig)
	}
	r := ExecRequest{Tool: name, Query: query, Body: arguments}
	for _, f := range [...]struct {
		key string
		to  *string
	}{{MCPMetaCallID, &r.CallID}, {MCPMetaIdempotencyKey, &r.IdempotencyKey}} {
		v, ok := meta[f.key].(string)
		if !ok {
			return ExecRequest{}, fmt.Errorf("%w: _meta %q is missing or not a string", ErrExecMalformed, f.key)
		}
		*f.to = v
	}
	if err := verify(header, r); err != nil {
		return ExecRequest{}, err
	}
	return r, nil
}

// MCPRefusedMeta is the _meta of the result (with isError) a server
// answers a request VerifyMCP refused with err, so the execute gate knows
// it did not run.
func MCPRefusedMeta(err error) map[string]any {
	return map[string]any{MCPMetaSignatureRefused: RefusedReason(err)}
}
