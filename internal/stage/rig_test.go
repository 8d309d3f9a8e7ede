package stage

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// rig says how startRig differs from the plain pipeline of startPipeline.
type rig struct {
	// files are the tool definitions applied, by file name; nil: examples/tools.yaml.
	files map[string][]byte
	// serve lists the tools the test executor serves; nil: create_invoice and get_weather.
	serve []string
	// exec answers one executed call (after it is counted); nil: {"done": tool, "call": id}.
	exec func(tool string, c toolserver.Call) (any, error)
	// configure adjusts the stage configuration before Run.
	configure func(*Config)
	// server adjusts the embedded NATS server's options (e.g. MaxPayload).
	server []func(*server.Options)
	// before runs once the tools are applied, before the stages start.
	before func(*pipe)
}

// rigUser is the producer user startRig lets assert identity: pipe.publish
// sends a message with roles on its subject (wire.InAsResponse).
const rigUser = "rig-producer"

// startRig runs every stage in one process over an embedded NATS server and
// a real redis-server, with the tools applied and a counting executor.
func startRig(t *testing.T, r rig) *pipe {
	t.Helper()
	srv := testenv.RunJetStream(t, r.server...)
	rds := testenv.RunRedis(t)
	nc, js := testenv.Connect(t, srv)
	p := &pipe{t: t, nc: nc, js: js, ctx: context.Background()}
	if err := streams.Ensure(p.ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	files := r.files
	if files == nil {
		files = map[string][]byte{"tools.yaml": exampleTools(t)}
	}
	p.defs = applyTools(t, js, files)
	serve := r.serve
	if serve == nil {
		serve = []string{"create_invoice", "get_weather"}
	}
	serveTools(t, nc, serve, func(name string, c toolserver.Call) (any, error) {
		p.executed.Add(1)
		if r.exec != nil {
			return r.exec(name, c)
		}
		return map[string]any{"done": name, "call": c.ID}, nil
	})
	if r.before != nil {
		r.before(p)
	}
	cfg := Config{
		NATSURL: srv.ClientURL(), RedisURL: rds.URL(), Stages: streams.Names(),
		Log:         zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel),
		AssertUsers: []string{rigUser},
	}
	if r.configure != nil {
		r.configure(&cfg)
	}
	runStages(t, cfg, "pipeline")
	return p
}

// exampleTools is examples/tools.yaml.
func exampleTools(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("../../examples/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// applyTools loads and stores every file's definitions, as `tools apply`.
func applyTools(t *testing.T, js jetstream.JetStream, files map[string][]byte) []tool.Definition {
	t.Helper()
	kv, err := js.KeyValue(context.Background(), streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	var all []tool.Definition
	for file, data := range files {
		defs, err := tool.Load(file, data)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := registry.Apply(context.Background(), kv, file, defs, false); err != nil {
			t.Fatal(err)
		}
		all = append(all, defs...)
	}
	return all
}

// serveTools serves each named tool on nc with fn, until cleanup.
func serveTools(t *testing.T, nc *nats.Conn, names []string, fn func(tool string, c toolserver.Call) (any, error)) {
	t.Helper()
	// Named after the example group: the only service whose discovery
	// subjects executor-example may serve, in the rigs that connect as it.
	ts, err := toolserver.New(nc, authz.ExampleGroup, "1.0.0", testExecKey())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Stop() })
	for _, name := range names {
		if err := ts.Handle(name, func(_ context.Context, c toolserver.Call) (any, error) { return fn(name, c) }); err != nil {
			t.Fatal(err)
		}
	}
}

// runStages runs cfg's stages until cleanup, which drains them and fails the
// test if Run failed; it returns once they all consume.
func runStages(t *testing.T, cfg Config, what string) {
	t.Helper()
	if cfg.Exec.Signer == nil {
		cfg.Exec.Signer = testExecSigner() // what serveTools' toolserver verifies
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() { done <- Run(ctx, cfg, ready) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("%s stopped at start: %v", what, err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatalf("%s not ready", what)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}
