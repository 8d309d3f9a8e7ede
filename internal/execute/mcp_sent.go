package execute

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sentTransport wraps an MCP transport to learn whether a call's
// tools/call request was written: the line between ErrNotRun and
// ErrUnknown. A request is matched to its call by the call id in its _meta.
type sentTransport struct {
	mcp.Transport
	mu    sync.Mutex
	calls map[string]*sentFlag
	ids   map[jsonrpc.ID]*sentFlag // tools/call requests written, by request id
}

// sentFlag is one call's: wrote is set once its tools/call was written
// (stdio) or handed to the HTTP transport, which reports through
// httpWrote whether the POST went out when the write failed.
// answered is set when the server's response to it was read: only then is
// a JSON-RPC error the server's word rather than the client's.
type sentFlag struct {
	mu       sync.Mutex
	wrote    bool
	answered bool
	result   json.RawMessage // the answer's result as the server wrote it
}

func (f *sentFlag) set() { f.mu.Lock(); f.wrote = true; f.mu.Unlock() }
func (f *sentFlag) get() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wrote
}

func (f *sentFlag) answer(result json.RawMessage) {
	f.mu.Lock()
	f.answered, f.result = true, result
	f.mu.Unlock()
}

// structured is the answer's structuredContent as the server wrote it
// (compacted), or nil: the SDK's decoded copy has every number a float64.
func (f *sentFlag) structured() json.RawMessage {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	raw := f.result
	f.mu.Unlock()
	var r struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if json.Unmarshal(raw, &r) != nil || len(r.StructuredContent) == 0 {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, r.StructuredContent) != nil {
		return nil
	}
	return b.Bytes()
}
func (f *sentFlag) gotAnswer() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.answered
}

func newSentTransport(t mcp.Transport) *sentTransport {
	return &sentTransport{Transport: t, calls: map[string]*sentFlag{}, ids: map[jsonrpc.ID]*sentFlag{}}
}

// track registers call id's flag until done is called.
func (s *sentTransport) track(callID string) (f *sentFlag, done func()) {
	f = &sentFlag{}
	s.mu.Lock()
	s.calls[callID] = f
	s.mu.Unlock()
	return f, func() {
		s.mu.Lock()
		if s.calls[callID] == f {
			delete(s.calls, callID)
		}
		for id, g := range s.ids {
			if g == f {
				delete(s.ids, id)
			}
		}
		s.mu.Unlock()
	}
}

func (s *sentTransport) flag(msg jsonrpc.Message) *sentFlag {
	r, ok := msg.(*jsonrpc.Request)
	if !ok || r.Method != "tools/call" {
		return nil
	}
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if json.Unmarshal(r.Params, &p) != nil {
		return nil
	}
	id, _ := p.Meta[MetaCallID].(string)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[id]
}

// Connect implements mcp.Transport.
func (s *sentTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := s.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &sentConn{Connection: c, t: s}, nil
}

type sentConn struct {
	mcp.Connection
	t *sentTransport
}

// Write marks a call's tools/call as sent when it was written whole. A
// failed write leaves the flag to what the HTTP transport saw (stdio: a
// write to a dead pipe did not reach the server). The request id is
// registered before writing: over streamable HTTP the answer can be read
// before Write returns, and it must still count as the server's.
func (c *sentConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	f := c.t.flag(msg)
	if f != nil {
		c.t.mu.Lock()
		c.t.ids[msg.(*jsonrpc.Request).ID] = f
		c.t.mu.Unlock()
	}
	err := c.Connection.Write(ctx, msg)
	if f != nil && err == nil {
		f.set()
	}
	return err
}

// Read marks the call whose response it is as answered.
func (c *sentConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.t.mu.Lock()
		f := c.t.ids[r.ID]
		c.t.mu.Unlock()
		if f != nil {
			f.answer(r.Result)
		}
	}
	return msg, err
}
