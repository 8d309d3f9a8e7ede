// Package benchrig starts the pipeline `toolgate bench` measures: an
// embedded nats-server (or a connection to an external one), Redis and
// every stage in this process. It is apart from package bench because the
// stages' own tests import bench.
package benchrig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/bench"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// Options say where a Rig keeps its store and which Redis it uses.
type Options struct {
	Dir       string // required: the JetStream store and redis-server's directory
	RedisURL  string // empty: start a redis-server in Dir
	ToolsFile string // tool definitions applied before the stages start
	JSONHops  bool   // envelopes between gates as JSON (stage.Config.JSONHops), to compare
	// Fair is the fair-share layout (tenants, lanes); zero: the defaults.
	Fair streams.Fair
	// Extra are more tool definitions (YAML) applied beside ToolsFile's
	// (the bulkhead scenarios' tools).
	Extra []byte
	// Handlers serve the tools they name instead of the no-op executor;
	// a nil one leaves its tool unserved (no responders) until Serve.
	// Each is served by Workers instances of its service (a queue group;
	// default 1): one instance answers one request at a time, so a slow
	// executor needs as many as the calls it should run at once.
	Handlers map[string]toolserver.Func
	Workers  int

	// NATSURL is an external nats-server to run on instead of the
	// embedded one (external.go: the rig refuses a server that holds
	// toolgate's streams, and deletes the ones it made on Close);
	// NATSOpts connect to it (credentials). Counters read its counters
	// (nil: unavailable), and NATSPIDs are its processes when they are this
	// process's children (their CPU is then counted with the pipeline's).
	// Replicas is the replicas of every stream and bucket (3 on a
	// three-node cluster; 0: 1).
	NATSURL  string
	NATSOpts []nats.Option
	Counters bench.Counters
	NATSPIDs []int
	Replicas int
}

// Rig is the pipeline the bench measures: an embedded nats-server with
// JetStream on file storage (or Options.NATSURL's), Redis, every stage of `toolgate up` in this
// process with a no-op executor for every applied tool, and the stages'
// own metrics, from which the handler time per stage is read.
type Rig struct {
	bench.Target
	NATS  *testenv.NATS
	Tools []tool.Definition
	// Leaders is what streams.SpreadLeaders did after the streams were
	// applied on a cluster (Replicas > 1): the streams' leaders placed
	// over the nodes, as `toolgate streams apply` places them.
	Leaders []streams.LeaderMove

	redis   *testenv.Redis
	owns    bool // toolgate's streams on the external server are the rig's: Close deletes them
	signer  *execute.Signer
	workers int
	cancel  context.CancelFunc
	runErr  chan error
}

// Start starts the pipeline and returns once every stage consumes.
func Start(o Options) (r *Rig, err error) {
	if o.Dir == "" {
		return nil, errors.New("bench: benchrig.Options.Dir is required")
	}
	defs, err := loadTools(o.ToolsFile)
	if err != nil {
		return nil, err
	}
	r = &Rig{Target: bench.Target{Metrics: metrics.New()}, Tools: defs, runErr: make(chan error, 1)}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	natsURL := o.NATSURL
	if natsURL == "" {
		if r.NATS, err = testenv.StartNATS(testenv.NATSOptions{StoreDir: filepath.Join(o.Dir, "js"), Partitions: o.Fair.PartitionCount()}); err != nil {
			return r, fmt.Errorf("bench: embedded NATS: %w", err)
		}
		natsURL, r.Counters = r.NATS.URL(), bench.Embedded{S: r.NATS.Server()}
	} else {
		r.Counters, r.NATSPIDs = o.Counters, o.NATSPIDs
		if r.Counters == nil {
			r.Counters = bench.NoCounters{Why: "no way to read the external server's counters was given"}
		}
	}
	redisURL := o.RedisURL
	if redisURL == "" {
		if r.redis, err = testenv.StartRedis(testenv.RedisOptions{Dir: o.Dir}); err != nil {
			return r, fmt.Errorf("bench: %w (or name a Redis)", err)
		}
		redisURL, r.RedisPID = r.redis.URL(), r.redis.PID()
	}
	if r.NC, err = nats.Connect(natsURL, append([]nats.Option{nats.Name("toolgate bench"), nats.MaxReconnects(-1)}, o.NATSOpts...)...); err != nil {
		return r, fmt.Errorf("bench: connect to NATS at %s: %w", natsURL, err)
	}
	if r.JS, err = jetstream.New(r.NC, jetstream.WithPublishAsyncMaxPending(4096)); err != nil {
		return r, err
	}
	ctx := context.Background()
	if o.NATSURL != "" {
		if err = refuseToolgateStreams(ctx, r.JS, natsURL); err != nil {
			return r, err
		}
		r.owns = true
	}
	settings := streams.DefaultSettings()
	settings.Fair = o.Fair
	settings.Replicas = max(o.Replicas, 1)
	if err = ensure(ctx, r.JS, settings); err != nil {
		return r, err
	}
	if settings.Replicas > 1 {
		sctx, cancel := context.WithTimeout(ctx, streams.SpreadTimeout)
		r.Leaders, err = streams.SpreadLeaders(sctx, r.JS)
		cancel()
		if err != nil {
			return r, fmt.Errorf("bench: leaders: %w", err)
		}
	}
	kv, err := r.JS.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		return r, err
	}
	if _, err = registry.Apply(ctx, kv, o.ToolsFile, defs, false); err != nil {
		return r, err
	}
	own, err := tool.Load("bench", bench.ToolsYAML())
	if err != nil {
		return r, err
	}
	if _, err = registry.Apply(ctx, kv, "bench", own, false); err != nil {
		return r, err
	}
	r.Tools = append(r.Tools, own...)
	if len(o.Extra) > 0 {
		extra, err := tool.Load("bench-extra", o.Extra)
		if err != nil {
			return r, err
		}
		if _, err = registry.Apply(ctx, kv, "bench-extra", extra, false); err != nil {
			return r, err
		}
		r.Tools = append(r.Tools, extra...)
	}
	signer, err := execute.GenerateSigner() // the pipeline signs, the tool verifies, as in production
	if err != nil {
		return r, err
	}
	r.signer, r.workers = signer, max(o.Workers, 1)
	// As a deployment would: its executor runs as many calls at once as
	// execute sends a group (the default group concurrency, 8; more for the
	// stage's 16 handlers), not one at a time.
	ts, err := toolserver.New(r.NC, "bench-noop", "1.0.0", toolserver.PublicKey(signer.Public()...), toolserver.Concurrency(16))
	if err != nil {
		return r, err
	}
	for _, d := range r.Tools {
		f, own := o.Handlers[d.Name]
		switch {
		case !own:
			err = ts.Handle(d.Name, func(context.Context, toolserver.Call) (any, error) { return map[string]bool{"ok": true}, nil })
		case f != nil:
			err = r.Serve(d.Name, f)
		} // a nil one: down until Serve
		if err != nil {
			return r, err
		}
	}
	rctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	ready := make(chan struct{})
	go func() {
		r.runErr <- stage.Run(rctx, stage.Config{NATSURL: natsURL, NATSOpts: o.NATSOpts, RedisURL: redisURL, Stages: streams.Names(), Log: zerolog.Nop(),
			Exec: stage.ExecConfig{Signer: signer}, Metrics: r.Metrics, JSONHops: o.JSONHops, Settings: settings}, ready)
	}()
	select {
	case <-ready:
		return r, nil
	case err = <-r.runErr:
		r.runErr <- err // Close reads it again
		return r, fmt.Errorf("bench: pipeline: %w", err)
	}
}

// Serve starts serving name with f (an executor coming back), by
// Options.Workers instances.
func (r *Rig) Serve(name string, f toolserver.Func) error {
	for range r.workers {
		ts, err := toolserver.New(r.NC, "bench-"+strings.ReplaceAll(name, "_", "-"), "1.0.0", toolserver.PublicKey(r.signer.Public()...))
		if err != nil {
			return err
		}
		if err := ts.Handle(name, f); err != nil {
			return err
		}
	}
	return nil
}

// Close stops the stages, then NATS and Redis (on an external server:
// deletes the streams and buckets it made there), and returns the stages'
// error.
func (r *Rig) Close() error {
	var err error
	if r.cancel != nil {
		r.cancel()
		err = <-r.runErr
		r.cancel = nil
	}
	if r.owns {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = errors.Join(err, deleteToolgateStreams(ctx, r.JS))
		cancel()
		r.owns = false
	}
	if r.NC != nil {
		r.NC.Close()
	}
	if r.NATS != nil {
		r.NATS.Shutdown()
	}
	if r.redis != nil {
		r.redis.Stop()
	}
	return err
}

func loadTools(file string) ([]tool.Definition, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("bench: tools: %w", err)
	}
	return tool.Load(file, data)
}

// ensure applies the streams and buckets. On a cluster just formed (R3)
// the meta leader may not be elected yet: until then Ensure fails, and is
// tried again for a minute.
func ensure(ctx context.Context, js jetstream.JetStream, s streams.Settings) error {
	if s.Replicas <= 1 {
		return streams.Ensure(ctx, js, s)
	}
	return testenv.Poll(time.Minute, 250*time.Millisecond, func() error {
		ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return streams.Ensure(ectx, js, s)
	})
}
