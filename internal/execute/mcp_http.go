package execute

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callHTTP runs one tools/call in a session of its own over streamable
// HTTP. The flag tells whether tools/call was written and answered.
func (m *MCP) callHTTP(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, *sentFlag, error) {
	var calling, wrote atomic.Bool
	client := *m.Allow.Client()
	client.Transport = wroteTripper{next: client.Transport, wrote: func() {
		if calling.Load() {
			wrote.Store(true)
		}
	}}
	st := newSentTransport(&mcp.StreamableClientTransport{
		Endpoint: m.URL, HTTPClient: &client, DisableStandaloneSSE: true, MaxRetries: -1,
	})
	cs, err := newMCPClient().Connect(ctx, st, nil)
	if err != nil {
		if errors.Is(err, ErrDestination) {
			return nil, nil, fmt.Errorf("%w: mcp %s: %w", ErrNotRun, m.URL, unwrapURL(err))
		}
		return nil, nil, fmt.Errorf("%w: mcp %s: connecting (initialize): %v", ErrNotRun, m.URL, err)
	}
	defer closeLater(cs)
	f, done := st.track(params.Meta[MetaCallID].(string))
	defer done()
	calling.Store(true)
	res, err := cs.CallTool(ctx, params)
	if wrote.Load() {
		f.set()
	}
	return res, f, err
}

// closeLater closes cs off the call's path: closing a streamable HTTP
// session sends a DELETE the SDK waits on for up to 5s, and a server still
// busy with a lost call may hold it that long; the answer is already
// classified, so the executor's timeout bounds the call, not the goodbye.
func closeLater(cs *mcp.ClientSession) { go func() { _ = cs.Close() }() }

// wroteTripper reports each POST written whole to the server.
type wroteTripper struct {
	next  http.RoundTripper
	wrote func()
}

func (w wroteTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost {
		trace := &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				w.wrote()
			}
		}}
		r = r.WithContext(httptrace.WithClientTrace(r.Context(), trace))
	}
	return w.next.RoundTrip(r)
}

// newMCPClient is toolgate's MCP client.
func newMCPClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "toolgate", Version: "1"}, nil)
}
