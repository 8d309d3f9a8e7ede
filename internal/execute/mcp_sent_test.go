package execute

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answerFirstConn answers a request before its Write returns, as the
// streamable HTTP transport may: Write hands the answer to Read and waits
// until the test has read it.
type answerFirstConn struct {
	mcp.Connection
	in   chan jsonrpc.Message
	read chan struct{}
}

func (c *answerFirstConn) Write(_ context.Context, msg jsonrpc.Message) error {
	c.in <- &jsonrpc.Response{ID: msg.(*jsonrpc.Request).ID, Error: &jsonrpc.Error{Code: -32602, Message: "unknown tool"}}
	<-c.read
	return nil
}

func (c *answerFirstConn) Read(context.Context) (jsonrpc.Message, error) { return <-c.in, nil }

// Before, the request id was registered after Write returned: an answer
// read first was not the server's, and an unknown tool (a JSON-RPC error
// answer) came out ErrUnknown instead of a failed call (seen under -race).
func TestMCP_sent_an_answer_read_before_write_returns_is_the_servers(t *testing.T) {
	st := newSentTransport(nil)
	conn := &sentConn{Connection: &answerFirstConn{in: make(chan jsonrpc.Message, 1), read: make(chan struct{})}, t: st}
	inner := conn.Connection.(*answerFirstConn)
	f, done := st.track("resp-1-0")
	defer done()
	id, _ := jsonrpc.MakeID(float64(7))
	params, _ := json.Marshal(map[string]any{"name": "nosuch", "_meta": map[string]any{MetaCallID: "resp-1-0"}})
	go func() {
		if _, err := conn.Read(context.Background()); err != nil {
			t.Error(err)
		}
		close(inner.read)
	}()
	if err := conn.Write(context.Background(), &jsonrpc.Request{ID: id, Method: "tools/call", Params: params}); err != nil {
		t.Fatal(err)
	}
	if !f.get() || !f.gotAnswer() {
		t.Fatalf("wrote %v, answered %v: want both", f.get(), f.gotAnswer())
	}
}
