package stage

import (
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/internal/identity"
	"github.com/toolgate/toolgate/internal/model/modelclient"
	"github.com/toolgate/toolgate/internal/parse"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/shadow"
	"github.com/toolgate/toolgate/streams"
)

// Deps are what the stages of one process share.
type Deps struct {
	NC       *nats.Conn
	JS       jetstream.JetStream
	Tools    *registry.Registry
	Store    idem.Store // execute only
	Settings streams.Settings
	Limits   parse.Limits
	Owner    string // identifies this process in idempotency claims
	Log      zerolog.Logger
	Now      func() time.Time
	// StreamIdle is how long a streamed response may go without an event
	// before its calls are transport_incomplete (default 60s).
	StreamIdle time.Duration
	// StreamMaxEvents bounds Toolgate-Seq and the events of one streamed
	// response (default ingest.DefaultMaxStreamEvents).
	StreamMaxEvents int
	// TolerantProviders always get text recovery (as Toolgate-Tolerant: true).
	TolerantProviders []string
	// Concurrency per stage; execute defaults to 16 since it waits on tools.
	Concurrency map[string]int
	// Observe is told of every handler run (metrics); nil: nothing.
	Observe func(stage string, d time.Duration, err error)
	// Gap is told of every stand-still of a stage's worker (metrics); nil:
	// nothing.
	Gap func(stage string, d time.Duration)
	// Approvals holds calls waiting for a human (policy only); nil: the
	// approvals bucket of JS.
	Approvals *approval.Store
	// ApprovalTTL is how long a call waits for a decision (default 15 min);
	// ApprovalSweep how often the policy stage looks for expired ones
	// (default 5s).
	ApprovalTTL, ApprovalSweep time.Duration
	// Repair is the repair model; nil: the repair gate calls nothing.
	Repair *modelclient.Client
	// Emit turns what the gates return into messages and tells the process
	// of each transition (metrics, logs, sensitive fields); nil: no hooks.
	Emit *pipeline.Emitter
	// Malformed is told of every malformed stored record a stage meets
	// (records.go: log and count it); nil: logged only.
	Malformed MalformedFunc
	// LimitEvent is told of each limit a call was charged, rejected or held
	// by (metrics.LimitEvent); nil: not counted.
	LimitEvent func(limit, event string, fill float64)
	// CircuitTransition is told of each circuit state an executor group's
	// breaker enters (metrics.CircuitTransition); nil: not counted.
	CircuitTransition func(group, state string)
	// Identity verifies producers' tokens (accumulate; flags_identity.go);
	// nil: dev mode, identity headers on trust.
	Identity *identity.Verifier
	// AssertUsers: the NATS users whose identity headers count without an
	// issuer (accumulate; flags_identity.go).
	AssertUsers []string
	// Trace is the tracer provider of the gates' spans (internal/tracing); nil: none.
	Trace trace.TracerProvider
	// Exec signs executor requests and bounds HTTP destinations (execute
	// only; flags_exec.go).
	Exec ExecConfig
	// Shadow compares every call the validate or business gate refuses,
	// or the policy gate decides, with the shadow revision of the tools,
	// if one is applied (those stages only; nil: none).
	Shadow *shadow.Comparer
	// ShadowFlush is how often the counts are written (default
	// shadow.FlushEvery).
	ShadowFlush time.Duration
	// GroupSync is how often execute looks for new executor groups in the
	// registry (execgroups.go); default 500ms.
	GroupSync time.Duration
	// PartitionSync is how often the workers of the partitioned stages look
	// for partition streams created or deleted since (a changed P,
	// streams.PartitionStreamsOf); default 10s.
	PartitionSync time.Duration
	// Circuit configures every executor group's circuit breaker (breaker.go).
	Circuit Circuit
	// may says what this process's NATS user may read beyond its own work
	// (grants.go); nil: anything.
	may mayFunc
}
