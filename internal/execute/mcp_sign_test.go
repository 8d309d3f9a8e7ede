package execute

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/pkg/wire"
)

// trickyArgs has what a re-encoding changes: spaces, key order, a number
// past float64's digits, characters encoding/json escapes.
const trickyArgs = `{ "z": 1, "amount" : 12345678901234567891, "memo": "<b>&</b> é \u2028" }`

// signedServerHTTP serves a verifying testMCPServer over streamable HTTP.
func signedServerHTTP(t *testing.T, s *Signer, status bool) (func(tool string) *MCP, func(t *testing.T) *mcp.ClientSession) {
	t.Helper()
	v, err := toolserver.NewMCPVerifier(toolserver.PublicKey(s.Public()...))
	if err != nil {
		t.Fatal(err)
	}
	hs, ex := mcpHTTPWith(t, serverOpts{verifier: v, status: status})
	return ex, func(t *testing.T) *mcp.ClientSession { return rawSession(t, hs, "") }
}

// signedServerStdio runs the test binary as a verifying stdio server (the
// key reaches it as TOOLGATE_EXEC_PUBLIC_KEY, toolserver's discovery).
func signedServerStdio(t *testing.T, s *Signer, status bool) (func(tool string) *MCP, func(t *testing.T) *mcp.ClientSession) {
	t.Helper()
	ex := mcpStdioWith(t, s, status)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ex, func(t *testing.T) *mcp.ClientSession { return rawSession(t, nil, self) }
}

// rawSession is a plain SDK client session to the test server (hs, or the
// command self): what a forger on the path could send.
func rawSession(t *testing.T, hs *httptest.Server, self string) *mcp.ClientSession {
	t.Helper()
	var tr mcp.Transport
	if hs != nil {
		tr = &mcp.StreamableClientTransport{Endpoint: hs.URL, DisableStandaloneSSE: true}
	} else {
		tr = &mcp.CommandTransport{Command: exec.Command(self, "-test.run=^$")}
	}
	cs, err := newMCPClient().Connect(callCtx(t), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// runs is how many times signed_echo ran on the server of ex.
func runs(t *testing.T, ex func(tool string) *MCP) int {
	t.Helper()
	rep, err := ex("runs").Execute(callCtx(t), req())
	var n struct{ Runs int }
	if err != nil || !rep.OK || json.Unmarshal(rep.Result, &n) != nil {
		t.Fatalf("runs: %+v, %v", rep, err)
	}
	return n.Runs
}

func signedWith(ex func(tool string) *MCP, tool string, s *Signer) *MCP {
	m := ex(tool)
	m.Signer = s
	return m
}

// checkSigned: the verifying server runs a genuine request, and refuses
// (not run, ErrRefused) what is unsigned, signed by another key or altered
// on the way.
func checkSigned(t *testing.T, s *Signer, ex func(tool string) *MCP, raw func(t *testing.T) *mcp.ClientSession) {
	other, err := GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	genuine := Request{Tool: "charge", CallID: "resp-9-0", IdempotencyKey: "k-signed", Arguments: []byte(trickyArgs)}
	t.Run("genuine_is_run_with_its_exact_arguments", func(t *testing.T) {
		rep, err := signedWith(ex, "signed_echo", s).Execute(callCtx(t), genuine)
		if err != nil || !rep.OK {
			t.Fatalf("got %+v, %v; want the signed call run", rep, err)
		}
		var e struct {
			Raw string `json:"arguments_raw"`
			Sig string `json:"signature"`
		}
		_ = json.Unmarshal(rep.Result, &e)
		if !strings.Contains(e.Raw, "12345678901234567891") || !strings.HasPrefix(e.Sig, "t=") {
			t.Fatalf("the server saw arguments %s, signature %q", e.Raw, e.Sig)
		}
		if n := runs(t, ex); n != 1 {
			t.Fatalf("signed_echo ran %d times, want 1", n)
		}
	})
	for name, signer := range map[string]*Signer{"unsigned": nil, "signed_by_another_key": other} {
		t.Run(name+"_is_refused_not_run", func(t *testing.T) {
			_, err := signedWith(ex, "signed_echo", signer).Execute(callCtx(t), genuine)
			if !errors.Is(err, ErrNotRun) || !errors.Is(err, ErrRefused) {
				t.Fatalf("got %v, want ErrNotRun wrapping ErrRefused", err)
			}
		})
	}
	args, _ := mcpArguments(json.RawMessage(trickyArgs))
	m := signedWith(ex, "signed_echo", s)
	cs := raw(t)
	before := rawRuns(t, cs)
	for _, c := range []struct {
		name   string
		alter  func(p *mcp.CallToolParams)
		query  string
		reason string
	}{
		{"altered_arguments", func(p *mcp.CallToolParams) { p.Arguments = json.RawMessage(`{"amount":5000}`) }, "", wire.RefusedInvalid},
		{"altered_idempotency_key", func(p *mcp.CallToolParams) { p.Meta[MetaIdempotencyKey] = "k-other" }, "", wire.RefusedInvalid},
		{"altered_call_id", func(p *mcp.CallToolParams) { p.Meta[MetaCallID] = "resp-6-6" }, "", wire.RefusedInvalid},
		{"signed_for_another_tool", func(p *mcp.CallToolParams) { p.Name = "signed_echo" }, "", wire.RefusedInvalid},
		{"a_status_query_turned_into_a_call", func(*mcp.CallToolParams) {}, QueryStatus, wire.RefusedInvalid},
		{"signature_not_a_string", func(p *mcp.CallToolParams) { p.Meta[MetaSignature] = 42 }, "", wire.RefusedMalformed},
		{"no_signature", func(p *mcp.CallToolParams) { delete(p.Meta, MetaSignature) }, "", wire.RefusedUnsigned},
	} {
		t.Run(c.name+"_is_refused_not_run", func(t *testing.T) {
			name := "signed_echo"
			if c.name == "signed_for_another_tool" {
				name = "echo"
			}
			p, err := m.params(genuine, name, c.query, args)
			if err != nil {
				t.Fatal(err)
			}
			c.alter(p)
			res, err := cs.CallTool(callCtx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := res.Meta[wire.MCPMetaSignatureRefused].(string); !res.IsError || got != c.reason {
				t.Fatalf("result %+v: want isError refused %q", res, c.reason)
			}
			if _, err := m.reply(res, nil); !errors.Is(err, ErrRefused) {
				t.Fatalf("the executor read the refusal as %v, want ErrRefused", err)
			}
		})
	}
	if n := rawRuns(t, cs); n != before {
		t.Fatalf("signed_echo ran %d times for altered requests, want none", n-before)
	}
}

// rawRuns is runs over a raw session.
func rawRuns(t *testing.T, cs *mcp.ClientSession) int {
	t.Helper()
	res, err := cs.CallTool(callCtx(t), &mcp.CallToolParams{Name: "runs"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var n struct{ Runs int }
	if err := json.Unmarshal(b, &n); err != nil {
		t.Fatalf("runs: %s: %v", b, err)
	}
	return n.Runs
}

func TestMCP_signature_streamable_http(t *testing.T) {
	s, err := GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	ex, raw := signedServerHTTP(t, s, false)
	checkSigned(t, s, ex, raw)
}

func TestMCP_signature_stdio(t *testing.T) {
	s, err := GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	ex, raw := signedServerStdio(t, s, false)
	checkSigned(t, s, ex, raw)
}

// Before, the arguments were decoded into a map and encoded again: a
// number past float64's digits reached the server changed.
func TestMCP_arguments_reach_the_server_digit_for_digit(t *testing.T) {
	_, viaHTTP := mcpHTTP(t, nil)
	for name, ex := range map[string]func(string) *MCP{"streamable_http": viaHTTP, "stdio": mcpStdio(t)} {
		t.Run(name, func(t *testing.T) {
			r := req()
			r.Arguments = []byte(trickyArgs)
			rep, err := ex("echo").Execute(callCtx(t), r)
			var e struct {
				Raw string `json:"arguments_raw"`
			}
			if err != nil || !rep.OK || json.Unmarshal(rep.Result, &e) != nil {
				t.Fatalf("got %+v, %v", rep, err)
			}
			if !strings.Contains(e.Raw, `"amount":12345678901234567891`) {
				t.Fatalf("the server received %s, want amount 12345678901234567891 as sent", e.Raw)
			}
		})
	}
}
