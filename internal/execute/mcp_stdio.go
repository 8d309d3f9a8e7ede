package execute

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPPool keeps one stdio MCP server per command line: started at its first
// call, reused by the next, restarted at the call after it exited. It is
// bounded: at most MaxServers commands and MaxInFlight calls in flight on
// each; past them a call is ErrNotRun (nothing was sent).
type MCPPool struct {
	MaxServers  int // 0: 32
	MaxInFlight int // 0: 16

	mu      sync.Mutex
	servers map[string]*stdioServer
}

// stdioServer is one command's session.
type stdioServer struct {
	command string
	args    []string
	slots   chan struct{}

	mu      sync.Mutex
	session *mcp.ClientSession // nil: not running
	sent    *sentTransport
	stderr  *tailBuffer
}

// call runs params on command's server. A session found dead before
// tools/call was written is dropped and the command started again, once.
func (p *MCPPool) call(ctx context.Context, command string, args []string, params *mcp.CallToolParams) (*mcp.CallToolResult, *sentFlag, error) {
	s, err := p.server(command, args)
	if err != nil {
		return nil, nil, err
	}
	release, err := s.acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	for try := 0; ; try++ {
		cs, st, stderr, err := s.connect(ctx)
		if err != nil {
			return nil, nil, err
		}
		f, done := st.track(params.Meta[MetaCallID].(string))
		res, err := cs.CallTool(ctx, params)
		done()
		if err == nil || f.gotAnswer() {
			return res, f, err
		}
		if f.get() {
			return nil, f, fmt.Errorf("%w%s", err, stderr.note())
		}
		s.drop(cs)
		if try == 1 || ctx.Err() != nil {
			return nil, f, err
		}
	}
}

// with runs f on command's session (started when none runs), as one of
// the calls in flight on it.
func (p *MCPPool) with(ctx context.Context, command string, args []string, f func(*mcp.ClientSession) error) error {
	s, err := p.server(command, args)
	if err != nil {
		return err
	}
	release, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	cs, _, _, err := s.connect(ctx)
	if err != nil {
		return err
	}
	return f(cs)
}

// acquire takes one of the server's in-flight slots, or fails with
// ErrNotRun when none frees before ctx ends.
func (s *stdioServer) acquire(ctx context.Context) (release func(), err error) {
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: mcp stdio %s: %d calls in flight, none finished in time: %v", ErrNotRun, s.command, cap(s.slots), ctx.Err())
	}
}

// drop forgets cs, a session that could not send.
func (s *stdioServer) drop(cs *mcp.ClientSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == cs {
		s.session, s.sent = nil, nil
		go cs.Close()
	}
}

func (p *MCPPool) server(command string, args []string) (*stdioServer, error) {
	key := strings.Join(append([]string{command}, args...), "\x00")
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.servers[key]; ok {
		return s, nil
	}
	if p.servers == nil {
		p.servers = map[string]*stdioServer{}
	}
	if n := orDefault(p.MaxServers, 32); len(p.servers) >= n {
		return nil, fmt.Errorf("%w: mcp stdio %s: the execute stage already runs %d stdio MCP servers, its most", ErrNotRun, command, n)
	}
	s := &stdioServer{command: command, args: args, slots: make(chan struct{}, orDefault(p.MaxInFlight, 16))}
	p.servers[key] = s
	return s, nil
}

// connect returns the running session, starting the command when there is
// none.
func (s *stdioServer) connect(ctx context.Context) (*mcp.ClientSession, *sentTransport, *tailBuffer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != nil {
		return s.session, s.sent, s.stderr, nil
	}
	cmd := exec.Command(s.command, s.args...)
	s.stderr = &tailBuffer{max: 2 << 10}
	cmd.Stderr = s.stderr
	st := newSentTransport(&mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second})
	cs, err := newMCPClient().Connect(ctx, st, nil)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: mcp stdio %s: starting it: %v%s", ErrNotRun, s.command, err, s.stderr.note())
	}
	s.session, s.sent = cs, st
	go func() {
		_ = cs.Wait() // the process exited or the pipe broke: the next call restarts it
		s.mu.Lock()
		if s.session == cs {
			s.session, s.sent = nil, nil
		}
		s.mu.Unlock()
	}()
	return cs, st, s.stderr, nil
}

// Close stops every server of the pool.
func (p *MCPPool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, s := range p.servers {
		s.mu.Lock()
		if s.session != nil {
			errs = append(errs, s.session.Close())
			s.session = nil
		}
		s.mu.Unlock()
	}
	return errors.Join(errs...)
}

func orDefault(n, d int) int {
	if n > 0 {
		return n
	}
	return d
}

// tailBuffer keeps the last max bytes written to it: a server's stderr.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// note is ": stderr: ..." with the last line(s) the server wrote, or "".
func (t *tailBuffer) note() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.b))
	if s == "" {
		return ""
	}
	return " (its stderr: " + s + ")"
}
