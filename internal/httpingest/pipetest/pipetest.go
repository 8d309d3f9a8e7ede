// Package pipetest runs toolgate's real pipeline for tests of the HTTP
// ingest and of the examples: an embedded nats-server with JetStream and
// least-privilege users, a real redis-server, every stage as its own NATS
// user, the example tools applied, and the executor signing pair in a
// secrets directory (where the example executor finds its public key).
package pipetest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/identity"
	"github.com/toolgate/toolgate/internal/natsusers"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/internal/secrets"
	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

// Options say how a Pipe differs from the default.
type Options struct {
	Tenants  []string        // producer-<tenant> users besides the tenant-less producer
	Identity identity.Config // the stages' identity issuer; zero: dev mode
	// AssertUsers: the NATS users whose identity headers count without an
	// issuer, on their own subject (stage.Config.AssertUsers).
	AssertUsers []string
}

// Pipe is a running pipeline.
type Pipe struct {
	URL       string            // client URL without credentials
	Secrets   string            // secrets directory: nats-<user>.password, exec-signing.pub
	Passwords map[string]string // by user
	Signer    *execute.Signer
}

// Start runs the pipeline until cleanup.
func Start(t *testing.T, o Options) *Pipe {
	t.Helper()
	c := authz.DefaultConfig()
	c.Tenants = o.Tenants
	p := &Pipe{Secrets: t.TempDir(), Passwords: map[string]string{}}
	for _, u := range c.Names() {
		b, err := secrets.Ensure(p.Secrets, authz.PasswordFile(u), secrets.Random(16))
		if err != nil {
			t.Fatal(err)
		}
		p.Passwords[u] = trim(string(b))
	}
	users, err := natsusers.ConfigUsers(c, p.Passwords)
	if err != nil {
		t.Fatal(err)
	}
	srv := testenv.RunJetStream(t, func(o *server.Options) { o.Users = users })
	p.URL = srv.ClientURL()
	_, js := p.Connect(t, authz.Admin)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	applyExampleTools(t, js)
	if p.Signer, err = execute.EnsureSigner(p.Secrets); err != nil {
		t.Fatal(err)
	}
	rds := testenv.RunRedis(t)
	seals := sealtest.Keys(t)
	for _, st := range streams.Names() {
		run(t, stage.Config{
			Seals: seals, Identity: o.Identity, AssertUsers: o.AssertUsers, Exec: stage.ExecConfig{Signer: p.Signer},
			NATSURL: p.URL, NATSOpts: authz.ClientOptions(st, p.Passwords[st]),
			RedisURL: rds.URL(), Stages: []string{st}, SkipEnsure: true,
			Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.ErrorLevel).With().Str("stage", st).Logger(),
		}, st)
	}
	return p
}

// Connect opens a connection as user, closed in cleanup.
func (p *Pipe) Connect(t *testing.T, user string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(p.URL, append(authz.ClientOptions(user, p.Passwords[user]), nats.MaxReconnects(-1))...)
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

func applyExampleTools(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	file := filepath.Join(Root(), "examples", "tools.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := tool.Load(file, data)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Apply(context.Background(), kv, file, defs, false); err != nil {
		t.Fatal(err)
	}
}

// run runs one stage until cleanup, which fails the test if it failed.
func run(t *testing.T, cfg stage.Config, what string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() { done <- stage.Run(ctx, cfg, ready) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("stage %s stopped at start: %v", what, err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatalf("stage %s not ready", what)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("stage %s: %v", what, err)
		}
	})
}

func trim(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}
