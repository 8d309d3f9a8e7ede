package execute

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpHTTP serves testMCPServer over streamable HTTP; its executor may reach
// it (loopback allowed).
func mcpHTTP(t *testing.T, started chan<- struct{}) (*httptest.Server, func(tool string) *MCP) {
	return mcpHTTPWith(t, serverOpts{started: started})
}

// mcpHTTPWith is mcpHTTP of a server shaped by o (its release is the test's).
func mcpHTTPWith(t *testing.T, o serverOpts) (*httptest.Server, func(tool string) *MCP) {
	t.Helper()
	release := make(chan struct{})
	o.release = release
	srv := testMCPServer(o)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(release) }) // runs first: no handler outlives the test
	allow, err := ParseDestinations("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return hs, func(tool string) *MCP { return &MCP{URL: hs.URL, Tool: tool, Allow: allow} }
}

// mcpStdio runs the test binary as a stdio MCP server in a pool of the test.
func mcpStdio(t *testing.T) func(tool string) *MCP {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envMCPServer, "1")
	pool := &MCPPool{}
	t.Cleanup(func() { _ = pool.Close() })
	return func(tool string) *MCP {
		return &MCP{Command: self, Args: []string{"-test.run=^$"}, Tool: tool, Pool: pool, Commands: []string{self}}
	}
}

// mcpStdioWith is mcpStdio of a server that verifies with signer's public
// key when signer is set, and lists the status tool when status is.
func mcpStdioWith(t *testing.T, signer *Signer, status bool) func(tool string) *MCP {
	t.Helper()
	if signer != nil {
		t.Setenv("TOOLGATE_EXEC_PUBLIC_KEY", signer.PublicText())
	}
	if status {
		t.Setenv(envMCPStatus, "1")
	}
	return mcpStdio(t)
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type echoed struct {
	Arguments map[string]any `json:"arguments"`
	Key       string         `json:"key"`
	CallID    string         `json:"call_id"`
	PID       int            `json:"pid"`
}

func echo(t *testing.T, m *MCP) echoed {
	t.Helper()
	rep, err := m.Execute(callCtx(t), req())
	if err != nil || !rep.OK {
		t.Fatalf("echo: %+v, %v", rep, err)
	}
	var e echoed
	if err := json.Unmarshal(rep.Result, &e); err != nil {
		t.Fatalf("echo result %s: %v", rep.Result, err)
	}
	return e
}

// checkAnswers runs the answers every transport must give.
func checkAnswers(t *testing.T, ex func(tool string) *MCP) {
	t.Run("executed_ok_with_the_key_in_meta", func(t *testing.T) {
		e := echo(t, ex("echo"))
		if e.Key != "k123" || e.CallID != "resp-1-0" || e.Arguments["amount"] != float64(5) {
			t.Fatalf("the server saw %+v, want key k123, call id resp-1-0 and amount 5", e)
		}
	})
	t.Run("text_result", func(t *testing.T) {
		rep, err := ex("text").Execute(callCtx(t), req())
		if err != nil || !rep.OK || string(rep.Result) != `"invoice inv_1 sent"` {
			t.Fatalf("got %+v (%s), %v", rep, rep.Result, err)
		}
	})
	t.Run("is_error_is_a_failed_call", func(t *testing.T) {
		rep, err := ex("fail").Execute(callCtx(t), req())
		if err != nil || rep.OK || !strings.Contains(rep.Error, "card declined") {
			t.Fatalf("got %+v, %v; want a failed call saying card declined", rep, err)
		}
	})
	t.Run("unknown_tool_is_a_failed_call", func(t *testing.T) {
		rep, err := ex("nosuch").Execute(callCtx(t), req())
		if err != nil || rep.OK || !strings.Contains(rep.Error, "nosuch") {
			t.Fatalf("got %+v, %v; want a failed call naming the tool", rep, err)
		}
	})
}

func TestMCP_streamable_http(t *testing.T) {
	_, ex := mcpHTTP(t, nil)
	checkAnswers(t, ex)
}

func TestMCP_stdio(t *testing.T) {
	ex := mcpStdio(t)
	checkAnswers(t, ex)
	t.Run("one_process_is_reused", func(t *testing.T) {
		if a, b := echo(t, ex("echo")).PID, echo(t, ex("echo")).PID; a != b {
			t.Fatalf("pids %d then %d: the server was started twice", a, b)
		}
	})
}

func TestMCP_stdio_server_exiting_mid_call_is_unknown_then_restarted(t *testing.T) {
	ex := mcpStdio(t)
	before := echo(t, ex("echo")).PID
	_, err := ex("die").Execute(callCtx(t), req())
	if !errors.Is(err, ErrUnknown) {
		t.Fatalf("got %v, want ErrUnknown: tools/call was sent when the server died", err)
	}
	after := echo(t, ex("echo")).PID // the pool restarts the command
	if after == before {
		t.Fatalf("pid %d after the exit: not restarted", after)
	}
}

func TestMCP_http_connection_lost_mid_call_is_unknown(t *testing.T) {
	started := make(chan struct{}, 1)
	hs, ex := mcpHTTP(t, started)
	done := make(chan error, 1)
	go func() {
		_, err := ex("hang").Execute(callCtx(t), req())
		done <- err
	}()
	<-started
	hs.CloseClientConnections()
	if err := <-done; !errors.Is(err, ErrUnknown) {
		t.Fatalf("got %v, want ErrUnknown", err)
	}
}

func TestMCP_not_sent_is_not_run(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	loopback, _ := ParseDestinations("127.0.0.1")
	hs, _ := mcpHTTP(t, nil)
	for name, m := range map[string]*MCP{
		"connection_refused":   {URL: closed, Tool: "echo", Allow: loopback},
		"destination_refused":  {URL: hs.URL, Tool: "echo"},
		"command_not_found":    {Command: "/nonexistent/mcp-server", Tool: "echo", Pool: &MCPPool{}, Commands: []string{"/nonexistent/mcp-server"}},
		"command_not_a_server": {Command: "/bin/true", Tool: "echo", Pool: &MCPPool{}, Commands: []string{"/bin/true"}},
		// Before, any command a tool definition named was started.
		"command_not_listed": {Command: "/bin/true", Tool: "echo", Pool: &MCPPool{}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := m.Execute(callCtx(t), req())
			if !errors.Is(err, ErrNotRun) {
				t.Fatalf("got %v, want ErrNotRun", err)
			}
			if (name == "destination_refused" || name == "command_not_listed") && !errors.Is(err, ErrDestination) {
				t.Fatalf("got %v, want ErrDestination", err)
			}
		})
	}
}

// Before, a result's structuredContent was the SDK's decoded copy: a number
// past float64's digits came back changed.
func TestMCP_structured_result_comes_back_digit_for_digit(t *testing.T) {
	_, viaHTTP := mcpHTTP(t, nil)
	for name, ex := range map[string]func(string) *MCP{"streamable_http": viaHTTP, "stdio": mcpStdio(t)} {
		t.Run(name, func(t *testing.T) {
			rep, err := ex("big").Execute(callCtx(t), req())
			if err != nil || !rep.OK || string(rep.Result) != `{"id":12345678901234567891,"b":1,"a":2}` {
				t.Fatalf("got %+v (%s), %v; want the server's object as it wrote it", rep, rep.Result, err)
			}
		})
	}
}
