// Package toolserver lets a tool author serve a tool to toolgate's execute
// gate in a few lines, on top of nats.go's micro framework:
//
//	srv, _ := toolserver.New(nc, "billing", "1.0.0")
//	srv.Handle("create_invoice", func(ctx context.Context, c toolserver.Call) (any, error) { ... })
//
// Every request must carry the execute gate's signature (wire.SignExecUntil,
// header Toolgate-Signature) over its call id, idempotency key, tool, query,
// exact body, issue time and expiry, and be within its lifetime by this
// server's clock (Lifetime, default 60 s; Skew, default 5 s). The server
// verifies it with toolgate's public key (PublicKey, else
// TOOLGATE_EXEC_PUBLIC_KEY, else .toolgate/secrets/exec-signing.pub) before
// anything else, and refuses what is unsigned, expired or altered without
// calling the handler: a request that skipped toolgate's gates (sent
// straight to toolgate.exec.<tool> by anyone who may publish there) never
// runs, whatever the broker allows. New fails when it finds no key.
//
// A request runs at most once. Before the tool runs, the server creates a
// durable record of the request's tool and idempotency key in the JetStream
// key-value bucket wire.ExecReplayBucket, or the partition's bucket the
// signed request names (wire.HeaderReplayPartition; shared by every
// replica, kept across restarts; ReplayBucket names one for all); a second
// delivery of the same key (a captured request sent again, before or after
// a restart, or a redelivery) gets the stored answer, or, while the first is still running
// or was cut short, an answer that says so (header Toolgate-Exec-Record), and
// never a second run. Status queries ("did call X happen?", header
// Toolgate-Query: status) answer from the same records. A tool that writes
// to a database should also store the key with its effect, in the same
// transaction, since only the tool can make the effect exactly-once end to
// end.
//
// It imports nats.go, micro, pkg/wire and the standard library only, so an
// executor links nothing of toolgate's gates.
package toolserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

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
	svc    micro.Service
	nc     *nats.Conn
	opts   options
	replay *replayBuckets
}

// New registers a micro service called name. It fails when it has no
// public key to verify toolgate's requests with (see PublicKey, Insecure),
// when it cannot bind the bucket of its durable records (ReplayBucket), and
// when the server refuses the service's subscriptions (its NATS user may not
// serve name).
func New(nc *nats.Conn, name, version string, opts ...Option) (*Server, error) {
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
	replay := &replayBuckets{fixed: o.replay}
	if o.replay == nil {
		b, err := bindReplay(nc)
		if err != nil {
			return nil, err
		}
		replay = b
	}
	svc, err := micro.AddService(nc, micro.Config{Name: name, Version: version, Description: "toolgate tool executor"})
	if err != nil {
		return nil, fmt.Errorf("toolserver: %w", err)
	}
	if err := subscribed(nc, "$SRV."); err != nil { // any of its discovery subjects
		_ = svc.Stop()
		return nil, fmt.Errorf("toolserver: service %s: %w", name, err)
	}
	return &Server{svc: svc, nc: nc, opts: o, replay: replay}, nil
}

// Handle serves tool with f. It returns an error when the server refuses
// the subscription (the connection's user may not serve tool), never
// serving nothing in silence.
func (s *Server) Handle(tool string, f Func) error {
	h := micro.HandlerFunc(func(r micro.Request) {
		c := Call{ID: r.Headers().Get(wire.HeaderCallID), IdempotencyKey: r.Headers().Get(wire.HeaderIdemKey), Arguments: json.RawMessage(r.Data())}
		q := r.Headers().Get(wire.HeaderQuery)
		part, err := wire.ParseReplayPartition(r.Headers().Values(wire.HeaderReplayPartition))
		if err == nil {
			err = s.verify(tool, r.Headers(), q, r.Data(), part)
		}
		if err != nil {
			s.refuse(r, tool, err)
			return
		}
		if c.IdempotencyKey == "" && q == "" && s.opts.insecure {
			_ = r.Respond(run(f, c)) // nothing to record it by; Insecure is for tests
			return
		}
		if c.IdempotencyKey == "" {
			s.refuse(r, tool, fmt.Errorf("%w: no %s", wire.ErrExecMalformed, wire.HeaderIdemKey))
			return
		}
		if q != "" {
			_ = r.Respond(s.status(tool, q, c.IdempotencyKey, part))
			return
		}
		rec, rev, taken, kv, err := s.takeIn(part, tool, c)
		switch {
		case err != nil:
			respondReplay(r, wire.RecordUnavailable, "toolserver: not run: the record of requests taken ("+wire.ExecReplayPartitionBucket(part)+") is unavailable: "+err.Error())
			return
		case !taken && rec.State == recordDone:
			_ = r.Respond(rec.Reply, micro.WithHeaders(micro.Headers{wire.HeaderExecRecord: []string{wire.RecordStored}}))
			return
		case !taken:
			respondReplay(r, wire.RecordRunning, "toolserver: not run again: this request was taken before (at its idempotency key) and its run has not finished, or was cut short; ask its status")
			return
		}
		reply := run(f, c)
		// The answer goes out even when it cannot be kept: the record says
		// running, so a second delivery is still never run.
		_ = complete(kv, tool, c, rev, reply)
		_ = r.Respond(reply)
	})
	if err := s.svc.AddEndpoint(tool, concurrent(s.opts.concurrency, h), micro.WithEndpointSubject(wire.Exec(tool))); err != nil {
		return fmt.Errorf("toolserver: %s: %w", tool, err)
	}
	if err := subscribed(s.nc, wire.Exec(tool)+`"`); err != nil { // exactly the tool's subject
		return fmt.Errorf("toolserver: %s: %w", tool, err)
	}
	return nil
}

// subscribed waits for the server to have seen the connection's
// subscriptions (a flush) and returns the permissions violation it reported
// for a subject starting with prefix (ending in `"`: that subject exactly): the server refuses a subscription
// asynchronously, so without this a refused tool would look served.
func subscribed(nc *nats.Conn, prefix string) error {
	if err := nc.FlushTimeout(storeTimeout); err != nil {
		return fmt.Errorf("flushing the subscription: %w", err)
	}
	last := nc.LastError()
	if errors.Is(last, nats.ErrPermissionViolation) && strings.Contains(last.Error(), `Subscription to "`+prefix) {
		return fmt.Errorf("%w: the connection's NATS user may not subscribe there (for toolgate's executor-<group> users: the tool is not in the group's tools, or the service is not named after the group)", last)
	}
	return nil
}

// respondReplay answers a request not run for its record: header
// Toolgate-Exec-Record with why, and {"ok": false, "error": msg}.
func respondReplay(r micro.Request, why, msg string) {
	body, _ := json.Marshal(map[string]any{"ok": false, "error": msg})
	_ = r.Respond(body, micro.WithHeaders(micro.Headers{wire.HeaderExecRecord: []string{why}}))
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

// status answers a query from the durable records of partition part: {"known": true, "ok":
// ..., "result": ...} for a key whose run finished, {"known": false} for one
// never taken or still running (or cut short); an unreadable record is no
// answer. A query it does not know is refused, never run as a call.
func (s *Server) status(tool, query, key string, part int) []byte {
	if query != wire.QueryStatus {
		out, _ := json.Marshal(map[string]any{"ok": false, "error": "unknown " + wire.HeaderQuery + " " + query + " (known: status)"})
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	kv, err := s.replay.bucket(ctx, part)
	var rec record
	var found bool
	if err == nil {
		rec, found, err = read(ctx, kv, tool, key)
	}
	if err != nil {
		out, _ := json.Marshal(map[string]any{"ok": false, "error": "toolserver: the record of requests taken (" + wire.ExecReplayPartitionBucket(part) + ") is unavailable: " + err.Error()})
		return out
	}
	if !found || rec.State != recordDone {
		return []byte(`{"known":false}`)
	}
	var r wire.ExecReply
	if err := json.Unmarshal(rec.Reply, &r); err != nil {
		return []byte(`{"known":false}`)
	}
	out, _ := json.Marshal(wire.ExecStatusReply{Known: true, OK: r.OK, Result: r.Result, Error: r.Error})
	return out
}
