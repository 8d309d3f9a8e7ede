// Package toolserver lets a tool author serve a tool to toolgate's execute
// gate in a few lines, on top of nats.go's micro framework:
//
//	srv, _ := toolserver.New(nc, "billing", "1.0.0")
//	srv.Handle("create_invoice", func(ctx context.Context, c toolserver.Call) (any, error) { ... })
//
// Every request must carry the execute gate's signature (wire.SignExec,
// header Toolgate-Signature) over its call id, idempotency key, tool, query
// and exact body, made within the tolerance (5 minutes) of this server's
// clock. The server verifies it with toolgate's public key (PublicKey, else
// TOOLGATE_EXEC_PUBLIC_KEY, else .toolgate/secrets/exec-signing.pub) before
// anything else, and refuses what is unsigned, stale or altered without
// calling the handler: a request that skipped toolgate's gates (sent
// straight to toolgate.exec.<tool> by anyone who may publish there) never
// runs, whatever the broker allows. New fails when it finds no key. A
// signed request replayed within the tolerance carries its idempotency key,
// so it gets the remembered answer, not a second run; there is no separate
// replay cache.
//
// Each request carries toolgate's idempotency key. The server remembers the
// answers of the keys it has seen (bounded), so a request that reaches it
// twice gets the first answer instead of a second side effect, and it
// answers toolgate's status query ("did call X happen?", header
// Toolgate-Query: status) from the same memory; a tool that
// writes to a database should also store the key with its effect, since only
// the tool can make the effect exactly-once end to end.
//
// It imports nats.go, micro, pkg/wire and the standard library only, so an
// executor links nothing of toolgate's gates.
package toolserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Call is one execution request.
type Call struct {
	ID             string          // toolgate's call id
	IdempotencyKey string          // stable for the call's tool and arguments
	Arguments      json.RawMessage // the validated arguments
}

// Func runs a tool. A returned error becomes {"ok": false, "error": ...}.
type Func func(ctx context.Context, c Call) (any, error)

// Server serves tools on toolgate.exec.<tool>.
type Server struct {
	svc  micro.Service
	opts options
	mu   sync.Mutex
	seen map[string][]byte // idempotency key -> reply
	keys []string          // insertion order, for the bound
	max  int
}

// New registers a micro service called name. It fails when it has no
// public key to verify toolgate's requests with (see PublicKey, Insecure).
func New(nc *nats.Conn, name, version string, opts ...Option) (*Server, error) {
	o := options{tolerance: wire.DefaultExecTolerance, now: time.Now}
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
	svc, err := micro.AddService(nc, micro.Config{Name: name, Version: version, Description: "toolgate tool executor"})
	if err != nil {
		return nil, fmt.Errorf("toolserver: %w", err)
	}
	return &Server{svc: svc, opts: o, seen: map[string][]byte{}, max: 100_000}, nil
}

// Handle serves tool with f.
func (s *Server) Handle(tool string, f Func) error {
	h := micro.HandlerFunc(func(r micro.Request) {
		c := Call{ID: r.Headers().Get(wire.HeaderCallID), IdempotencyKey: r.Headers().Get(wire.HeaderIdemKey), Arguments: json.RawMessage(r.Data())}
		q := r.Headers().Get(wire.HeaderQuery)
		if err := s.verify(tool, r.Headers(), q, r.Data()); err != nil {
			s.refuse(r, tool, err)
			return
		}
		if q != "" {
			_ = r.Respond(s.status(q, c.IdempotencyKey))
			return
		}
		if reply, ok := s.lookup(c.IdempotencyKey); ok {
			_ = r.Respond(reply)
			return
		}
		reply := run(f, c)
		s.remember(c.IdempotencyKey, reply)
		_ = r.Respond(reply)
	})
	if err := s.svc.AddEndpoint(tool, h, micro.WithEndpointSubject(wire.Exec(tool))); err != nil {
		return fmt.Errorf("toolserver: %s: %w", tool, err)
	}
	return nil
}

// Stop stops serving.
func (s *Server) Stop() error { return s.svc.Stop() }

func run(f Func, c Call) (reply []byte) {
	defer func() {
		if r := recover(); r != nil {
			reply, _ = json.Marshal(map[string]any{"ok": false, "error": fmt.Sprintf("tool panicked: %v", r)})
		}
	}()
	res, err := f(context.Background(), c)
	if err != nil {
		reply, _ = json.Marshal(map[string]any{"ok": false, "error": err.Error()})
		return reply
	}
	reply, err = json.Marshal(map[string]any{"ok": true, "result": res})
	if err != nil {
		reply, _ = json.Marshal(map[string]any{"ok": false, "error": "result is not JSON: " + err.Error()})
	}
	return reply
}

func (s *Server) lookup(key string) ([]byte, bool) {
	if key == "" {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.seen[key]
	return r, ok
}

func (s *Server) remember(key string, reply []byte) {
	if key == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[key]; ok {
		return
	}
	s.seen[key] = reply
	s.keys = append(s.keys, key)
	if len(s.keys) > s.max {
		delete(s.seen, s.keys[0])
		s.keys = s.keys[1:]
	}
}

// status answers a query: {"known": true, "ok": ..., "result": ...} for a
// remembered key, {"known": false} otherwise. A query it does not know is
// refused, never run as a call.
func (s *Server) status(query, key string) []byte {
	if query != wire.QueryStatus {
		out, _ := json.Marshal(map[string]any{"ok": false, "error": "unknown " + wire.HeaderQuery + " " + query + " (known: status)"})
		return out
	}
	reply, ok := s.lookup(key)
	if !ok {
		return []byte(`{"known":false}`)
	}
	var r wire.ExecReply
	if err := json.Unmarshal(reply, &r); err != nil {
		return []byte(`{"known":false}`)
	}
	out, _ := json.Marshal(wire.ExecStatusReply{Known: true, OK: r.OK, Result: r.Result, Error: r.Error})
	return out
}
