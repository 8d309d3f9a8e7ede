package stage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/health"
	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/internal/identity"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/model"
	"github.com/toolgate/toolgate/internal/natslog"
	"github.com/toolgate/toolgate/internal/parse"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/tracing"
	"github.com/toolgate/toolgate/streams"
)

// Config configures a process that runs one or more stages.
type Config struct {
	NATSURL  string // TOOLGATE_NATS_URL
	NATSOpts []nats.Option
	RedisURL string // TOOLGATE_REDIS_URL
	// IdemStore is where execute keeps idempotency keys (idemstore.go):
	// IdemRedis, IdemEmbedded, or IdemAuto (Redis when RedisURL is set).
	IdemStore string
	Stages    []string // which stages this process runs
	HTTPAddr  string   // TOOLGATE_HTTP_ADDR: /healthz, /readyz; empty: none
	Settings  streams.Settings
	// SkipEnsure leaves streams, buckets and consumers alone: an admin
	// applies them (`toolgate streams apply`), and the stage, connected as a
	// least-privilege user (internal/authz) that may not create them, only looks
	// its own consumer up and fails when it is missing.
	SkipEnsure bool
	Limits     parse.Limits
	Log        zerolog.Logger
	// StreamIdle: a streamed response with no event for this long ends
	// transport_incomplete (default 60s; TOOLGATE_STREAM_IDLE_TIMEOUT).
	StreamIdle time.Duration
	// StreamMaxEvents bounds Toolgate-Seq and the events one streamed
	// response may store (default 10,000; TOOLGATE_STREAM_MAX_EVENTS).
	StreamMaxEvents int
	// TolerantProviders: responses from these providers always get text
	// recovery (TOOLGATE_TOLERANT_PROVIDERS, comma separated).
	TolerantProviders []string

	// ApprovalTTL is how long a call waits for a human decision before it
	// ends as approval_expired (default 15 min); ApprovalSweep is how often
	// the policy stage looks for expired approvals (default 5s).
	ApprovalTTL, ApprovalSweep time.Duration
	// PartitionSync is how often the partitioned stages' workers look for
	// partition streams (Deps.PartitionSync); 0: 10s.
	PartitionSync time.Duration
	// ShadowFlush is how often the policy stage writes the shadow's
	// counts (default shadow.FlushEvery; tests shorten it).
	ShadowFlush time.Duration

	// Repair is the repair model (TOOLGATE_REPAIR_*, see RepairFlags); an
	// empty Endpoint means none: failures go back to the caller unrepaired.
	Repair model.Config

	// Exec configures the execute stage's requests to executors: signing
	// key, HTTP destinations, answer limit (flags_exec.go).
	Exec ExecConfig

	// Metrics are served on /metrics of HTTPAddr; nil: a fresh set.
	Metrics *metrics.Metrics

	// Seals are the gate seal keys (flags_seal.go); nil: read from the
	// directory SealKeys (TOOLGATE_SEAL_KEYS), or, for a process running
	// every stage, fresh keys of its own.
	Seals    *seal.Keyring
	SealKeys string

	// Identity is the identity issuer (flags_identity.go); no Issuer: dev
	// mode, tenant and principal headers taken on trust, no roles granted.
	Identity identity.Config
	// AssertUsers are the NATS users whose identity headers count without
	// an issuer, on their own subject (wire.InAsResponse;
	// --identity-assert-users).
	AssertUsers []string

	// JSONHops: envelopes go to the next gate as JSON, not in the hop
	// encoding (TOOLGATE_HOP_ENCODING=json), while stages of a version that
	// reads only JSON still run.
	JSONHops bool

	// AuditStream: each terminal call's audit event goes to
	// toolgate.audit.<status> as well as in its result
	// (TOOLGATE_AUDIT_STREAM; pipeline.Emitter.AuditStream).
	AuditStream bool

	// Circuit configures the executor groups' circuit breakers (execute;
	// breaker.go); zero: the defaults.
	Circuit Circuit

	// HTTPRoutes, when set, mounts more handlers on HTTPAddr beside the
	// probes and /metrics (toolgate up's console: services/toolgate
	// up_console.go); see Mount.
	HTTPRoutes func(mux *http.ServeMux)
}

func (c *Config) setDefaults() {
	if c.NATSURL == "" {
		c.NATSURL = nats.DefaultURL
	}
	if c.Settings.MaxDeliver == 0 {
		c.Settings = streams.DefaultSettings()
	}
	if c.Limits == (parse.Limits{}) {
		c.Limits = parse.DefaultLimits()
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if len(c.Stages) == 0 {
		return errors.New("stage: no stage to run")
	}
	for _, s := range c.Stages {
		if !streams.IsStage(s) {
			return fmt.Errorf("stage: unknown stage %q (stages: %s)", s, strings.Join(streams.Names(), ", "))
		}
	}
	if slices.Contains(c.Stages, streams.Execute) {
		return idemStoreErr(c.IdemStore, c.RedisURL)
	}
	return nil
}

// Run connects, applies the declared topology, and runs the stages until
// ctx is done; then it drains in-flight work and returns. ready, when not
// nil, is closed once every stage consumes. Every stage is bound (toolgate
// up links them all); a stage binary runs only its own through Main.
func Run(ctx context.Context, cfg Config, ready chan<- struct{}) error {
	return run(ctx, cfg, bindings(), ready)
}

// run is Run with the stages' code given: binds holds at least the
// bindings of cfg.Stages.
func run(ctx context.Context, cfg Config, binds map[string]Binding, ready chan<- struct{}) error {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := cfg.Log
	// Bind the health and metrics address first: a process that cannot
	// have it stops here, instead of running on without probes or metrics.
	var httpL net.Listener
	if cfg.HTTPAddr != "" {
		l, err := health.Listen(cfg.HTTPAddr)
		if err != nil {
			return fmt.Errorf("stage: --http %s: %w: choose another with --http or TOOLGATE_HTTP_ADDR", cfg.HTTPAddr, errors.Unwrap(err))
		}
		httpL = l
		defer l.Close()
	}
	seals, err := sealKeyring(cfg)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	owner := fmt.Sprintf("%s/%d/%d", host, os.Getpid(), time.Now().UnixNano())
	opts := append([]nats.Option{nats.Name("toolgate " + strings.Join(cfg.Stages, ",")), nats.MaxReconnects(-1), nats.ErrorHandler(natslog.AsyncErrors(log, natslog.Every))}, cfg.NATSOpts...)
	nc, err := nats.Connect(cfg.NATSURL, opts...)
	if err != nil {
		return fmt.Errorf("stage: connect to NATS at %s: %w", cfg.NATSURL, err)
	}
	defer nc.Close()
	if err := checkServerVersion(nc.ConnectedServerVersion(), MinServerVersion); err != nil {
		return err
	}
	// A publish whose ack never comes (a permission denied, a stream leader
	// lost mid-publish) must fail its future, or the worker's acker waits on
	// it forever; the input is then nak'ed and its redelivery de-duplicated.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096), jetstream.WithPublishAsyncTimeout(10*time.Second))
	if err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	if !cfg.SkipEnsure {
		if err := streams.Ensure(ctx, js, cfg.Settings); err != nil {
			return err
		}
	}
	toolsKV, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		return fmt.Errorf("stage: bucket %s: %w%s", streams.BucketTools, err, applyHint(cfg))
	}
	m := cfg.Metrics
	if m == nil {
		m = metrics.New()
	}
	m.DwellTenants(cfg.Settings.Fair.Tenants) // a label each, bounded
	malformed := malformedHook(m, log)
	reg, err := registry.Open(ctx, toolsKV, log, registry.OnMalformed(malformed.from(streams.BucketTools)))
	if err != nil {
		return err
	}
	may := grantsOf(cfg)
	emit := &pipeline.Emitter{Transition: transitionHook(m, log, reg), Sensitive: sensitiveOf(reg), Registered: registeredIn(reg), MaxPayload: nc.MaxPayload(), Seals: seals,
		Waits: approvalWaits(js, cfg.ApprovalTTL), Notify: notifier(nc, may), JSONHops: cfg.JSONHops, AuditStream: cfg.AuditStream,
		Lane: cfg.Settings.Fair.LaneFunc(), ExecGroup: execGroupIn(reg), Partitions: cfg.Settings.Fair.PartitionCount()}
	defer watchCluster(m, cfg.Stages, js, may)() // metrics_sources.go
	m.KnownTools(reg.Names)
	tp, stopTrace, err := tracing.Setup(ctx, "toolgate-"+strings.Join(cfg.Stages, "-")) // OTEL_* env; off without an endpoint
	if err != nil {
		return err
	}
	defer stopTrace(context.Background())
	cmp, err := watchShadow(ctx, cfg, js, log)
	if err != nil {
		return err
	}
	d := Deps{
		NC: nc, JS: js, Tools: reg, Settings: cfg.Settings, Limits: cfg.Limits, Owner: owner, Log: log, Observe: m.Observe, Gap: m.Gap, Malformed: malformed, LimitEvent: m.LimitEvent, CircuitTransition: m.CircuitTransition,
		ApprovalTTL: cfg.ApprovalTTL, ApprovalSweep: cfg.ApprovalSweep, StreamIdle: cfg.StreamIdle, StreamMaxEvents: cfg.StreamMaxEvents,
		TolerantProviders: cfg.TolerantProviders, Emit: emit, AssertUsers: cfg.AssertUsers,
		Exec: cfg.Exec, may: may, Trace: tp, Shadow: cmp, ShadowFlush: cfg.ShadowFlush, Circuit: cfg.Circuit,
		PartitionSync: cfg.PartitionSync,
	}
	for _, st := range cfg.Stages { // the store, the repair model, the identity issuer: open.go
		b, ok := binds[st]
		if !ok || b.open == nil {
			continue // an unbound stage is refused by newSet
		}
		release, err := b.open(ctx, cfg, &d)
		if err != nil {
			return err
		}
		defer release()
	}
	set, err := newSet(cfg.Stages, binds, d)
	if err != nil {
		return err
	}
	readyCheck := func() error {
		if !nc.IsConnected() {
			return errors.New("NATS is not connected")
		}
		return set.Ready()
	}
	hctx, stopHTTP := context.WithCancel(context.Background())
	defer stopHTTP()
	go func() {
		if err := health.ServeListener(hctx, httpL, Mount(health.Handler(readyCheck, map[string]http.Handler{"/metrics": m.Handler()}), cfg.HTTPRoutes)); err != nil {
			log.Error().Err(err).Str("addr", cfg.HTTPAddr).Msg("health endpoint")
		}
	}()
	if ready != nil {
		go func() {
			for readyCheck() != nil {
				time.Sleep(10 * time.Millisecond)
			}
			close(ready)
		}()
	}
	log.Info().Strs("stages", cfg.Stages).Str("nats", cfg.NATSURL).Msg("stages running")
	err = set.Run(ctx)
	log.Info().Strs("stages", cfg.Stages).Msg("stages drained")
	return err
}

// applyHint tells what to do when the topology is missing and this process
// did not apply it.
func applyHint(cfg Config) string {
	if !cfg.SkipEnsure {
		return ""
	}
	return " (TOOLGATE_ENSURE=false: apply the streams first with `toolgate streams apply` as the NATS admin user)"
}

func openStore(ctx context.Context, cfg Config, js jetstream.JetStream, log zerolog.Logger) (idem.Store, func(), error) {
	needed := false
	for _, s := range cfg.Stages {
		needed = needed || s == streams.Execute
	}
	if !needed {
		return nil, func() {}, nil
	}
	if cfg.RedisURL != "" {
		st, err := idem.Dial(cfg.RedisURL) // redis://, redis-sentinel://, redis-cluster://
		if err != nil {
			return nil, nil, fmt.Errorf("stage: TOOLGATE_REDIS_URL: %w", err)
		}
		if err := st.Client().Ping(ctx).Err(); err != nil {
			log.Warn().Err(err).Msg("redis not answering yet; execute will retry")
		}
		log.Info().Msg("idempotency keys in Redis")
		return st, func() { st.Close() }, nil
	}
	kv, err := js.KeyValue(ctx, streams.BucketIdempotency)
	if err != nil {
		return nil, nil, fmt.Errorf("stage: %w", err)
	}
	log.Warn().Str("bucket", streams.BucketIdempotency).Msg("idempotency keys kept in the JetStream key-value bucket (embedded store; give --redis for Redis)")
	return idem.NewKV(kv), func() {}, nil
}
