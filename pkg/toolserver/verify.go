package toolserver

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Option configures a Server.
type Option func(*options) error

type options struct {
	keys          []ed25519.PublicKey
	insecure      bool
	lifetime      time.Duration
	skew          time.Duration
	requireExpiry bool
	now           func() time.Time
	onRefused     func(tool string, err error)
	replay        jetstream.KeyValue
	concurrency   int // requests of one tool at once (Concurrency)
}

func defaultOptions() options {
	return options{lifetime: wire.DefaultExecLifetime, skew: wire.DefaultExecSkew, now: time.Now}
}

// PublicKey verifies toolgate's requests with keys: the execute stage's
// public key (exec-signing.pub), several while it rotates. Without it, New
// looks in TOOLGATE_EXEC_PUBLIC_KEY (a file path, or the base64 key itself),
// then in <TOOLGATE_SECRETS, default .toolgate/secrets>/exec-signing.pub,
// where `toolgate up` writes it.
func PublicKey(keys ...ed25519.PublicKey) Option {
	return func(o *options) error {
		if len(keys) == 0 {
			return errors.New("toolserver: PublicKey: no key")
		}
		for _, k := range keys {
			if len(k) != ed25519.PublicKeySize {
				return errors.New("toolserver: PublicKey: not an ed25519 public key")
			}
		}
		o.keys = append(o.keys, keys...)
		return nil
	}
}

// Insecure accepts requests without a valid signature. DANGEROUS: anyone who
// can publish on toolgate.exec.<tool> then runs the tool, without any of
// toolgate's gates. For tests of other code only; never in a deployment.
func Insecure() Option {
	return func(o *options) error {
		o.insecure = true
		return nil
	}
}

// Lifetime is the longest a signed request stays good: past its expiry
// (or past its issue time plus d, for a signature without one) it is
// refused, and so is one signed to live longer than d (default
// wire.DefaultExecLifetime, 60 s; the execute stage's
// --exec-signature-ttl must not exceed it).
func Lifetime(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("toolserver: Lifetime: want a positive duration")
		}
		o.lifetime = d
		return nil
	}
}

// Skew is the clock difference between the execute stage and this server
// allowed around a request's issue time and expiry (default
// wire.DefaultExecSkew, 5 s).
func Skew(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("toolserver: Skew: want a positive duration")
		}
		o.skew = d
		return nil
	}
}

// Tolerance is Skew, its name before requests carried an expiry.
//
// Deprecated: use Skew and Lifetime.
func Tolerance(d time.Duration) Option { return Skew(d) }

// RequireExpiry refuses a request whose signature has no expiry (e= and
// v2=), as execute stages before it sent. Without it such a request is
// accepted until its issue time plus Lifetime.
func RequireExpiry() Option {
	return func(o *options) error {
		o.requireExpiry = true
		return nil
	}
}

// OnRefused is told of every request refused for its signature (to log or
// count it); the handler never ran for it.
func OnRefused(f func(tool string, err error)) Option {
	return func(o *options) error {
		o.onRefused = f
		return nil
	}
}

// discoverKeys finds the public key when no PublicKey option gave one.
func discoverKeys(getenv func(string) string) ([]ed25519.PublicKey, error) {
	if v := getenv("TOOLGATE_EXEC_PUBLIC_KEY"); v != "" {
		if keys, err := wire.ParseExecPublicKeys(v); err == nil {
			return keys, nil
		}
		b, err := os.ReadFile(v)
		if err != nil {
			return nil, fmt.Errorf("toolserver: TOOLGATE_EXEC_PUBLIC_KEY is neither a base64 ed25519 public key nor a readable file: %w", err)
		}
		keys, err := wire.ParseExecPublicKeys(string(b))
		if err != nil {
			return nil, fmt.Errorf("toolserver: TOOLGATE_EXEC_PUBLIC_KEY %s: %w", v, err)
		}
		return keys, nil
	}
	dir := getenv("TOOLGATE_SECRETS")
	if dir == "" {
		dir = filepath.Join(".toolgate", "secrets") // toolgate up's default (internal/secrets)
	}
	path := filepath.Join(dir, wire.ExecPublicKeyFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("toolserver: no public key to verify toolgate's requests with (%v): pass toolserver.PublicKey, "+
			"set TOOLGATE_EXEC_PUBLIC_KEY to the execute stage's %s (its path or its base64 content), "+
			"or run beside `toolgate up`, which writes it to .toolgate/secrets (TOOLGATE_SECRETS)", err, wire.ExecPublicKeyFile)
	}
	keys, err := wire.ParseExecPublicKeys(string(b))
	if err != nil {
		return nil, fmt.Errorf("toolserver: %s: %w", path, err)
	}
	return keys, nil
}

// verify checks one request's signature for tool, naming partition part of
// the replay bucket.
func (s *Server) verify(tool string, h micro.Headers, query string, body []byte, part int) error {
	if s.opts.insecure {
		return nil
	}
	return wire.VerifyExecWindow(h.Get(wire.HeaderSignature), wire.ExecRequest{
		CallID: h.Get(wire.HeaderCallID), IdempotencyKey: h.Get(wire.HeaderIdemKey), Tool: tool, Query: query, Body: body, ReplayPartition: part,
	}, s.opts.window(), s.opts.keys...)
}

// window is when a request is good, by this server's clock.
func (o options) window() wire.ExecWindow {
	return wire.ExecWindow{Now: o.now(), Lifetime: o.lifetime, Skew: o.skew, RequireExpiry: o.requireExpiry}
}

// refuse answers a request refused for its signature: header
// Toolgate-Signature-Refused (so the execute gate knows the tool did not
// run it) and {"ok": false, "error": ...}.
func (s *Server) refuse(r micro.Request, tool string, err error) {
	if s.opts.onRefused != nil {
		s.opts.onRefused(tool, err)
	}
	body, _ := json.Marshal(map[string]any{"ok": false, "error": "toolserver: refused, not run: " + err.Error()})
	_ = r.Respond(body, micro.WithHeaders(micro.Headers{wire.HeaderSignatureRefused: []string{wire.RefusedReason(err)}}))
}
