package streams

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Stream names.
const (
	StreamIn = "TOOLGATE_IN"
	// StreamResponses holds tenants' whole interactive responses, one per
	// response id for ResponseIDTTL (claimed.go): the publish is the
	// response-id claim.
	StreamResponses = wire.StreamResponses
	StreamGates     = "TOOLGATE_GATES"
	StreamResults   = "TOOLGATE_RESULTS"
	StreamDLQ       = "TOOLGATE_DLQ"
	StreamAudit     = "TOOLGATE_AUDIT"
)

// Key-value bucket names.
const (
	BucketTools       = "toolgate_tools"
	BucketCalls       = "toolgate_calls"
	BucketIdempotency = "toolgate_idempotency"
	BucketApprovals   = "toolgate_approvals"
	BucketResponses   = "toolgate_responses"
	BucketBatches     = "toolgate_batches"
	// BucketResponseIDs: every response id accumulate turned into calls,
	// with a hash of its content, so an id is used once (ResponseIDTTL).
	BucketResponseIDs = "toolgate_response_ids"
	// BucketExecReplay: executors' durable record of every request they
	// took, keyed <tool>.<idempotency key> (wire.ExecReplayBucket), so a
	// captured request never runs twice; each executor group may write only
	// its own tools' keys (authz).
	BucketExecReplay = wire.ExecReplayBucket
	// BucketToolsShadow: the shadow revision of the tools (`toolgate tools
	// apply --shadow`), one key, written by the admin and read by the
	// policy stage, which compares every live call with it.
	BucketToolsShadow = "toolgate_tools_shadow"
	// BucketShadowReport: the differences the shadow would have made, a
	// key per tool (counts and a few call ids, no arguments), written by
	// the policy stage and read by `tools shadow report` and the console.
	BucketShadowReport = "toolgate_shadow_report"
)

// What TOOLGATE_IN stores. InMaxBody is the most a response body, or a
// streamed response's events together, may be: accumulate refuses more
// (too_large), so a single ingest message larger than InMaxBody plus
// InHeaderRoom of headers could never become a call. TOOLGATE_IN's
// max_msg_size is that sum (or Settings.MaxMsgSize if smaller), and such a
// message is refused at publish: the producer hears it at once (JetStream
// error 10054; pkg/producer's ErrTooLarge) and the embedded server never
// holds it. Held, it cost far more than its size: every message a consumer
// is delivered is loaded into a buffer of nats-server's jsPubMsgPool, a
// sync.Pool that keeps each buffer at its largest capacity (returnToPool
// keeps buf[:0]) and, under steady load, is drawn from again before two
// collections pass, so ten 15 MiB events kept up to 150 MiB live for as long
// as the load went on (docs/scaling.md, "RSS after the attack").
const (
	InMaxBody    = 8 << 20
	InHeaderRoom = 64 << 10
)

// Settings are the knobs of the declared topology.
type Settings struct {
	Storage      jetstream.StorageType
	Replicas     int
	DedupWindow  time.Duration // how long a Nats-Msg-Id suppresses a duplicate
	InMaxAge     time.Duration // raw provider input kept for assembly and evidence
	DLQMaxAge    time.Duration // dead letters hold full raw arguments: keep them briefly
	ResultMaxAge time.Duration
	// AuditMaxAge is how long audit events are kept: TOOLGATE_AUDIT's, and
	// TOOLGATE_RESULTS' too, since each result carries its call's audit
	// event (ResultsMaxAge).
	AuditMaxAge time.Duration
	CallsMaxAge time.Duration // call status records
	IdemTTL     time.Duration // idempotency records in the embedded store
	// ResponseIDTTL is how long a response id stays claimed: longer than
	// approvals wait and dead letters are replayed.
	ResponseIDTTL time.Duration
	MaxMsgSize    int32
	AckWait       time.Duration
	MaxDeliver    int
	// Fair is the fair-share layout of the laned stages (fair.go).
	Fair Fair
	// lowered: P was lowered to 1 less than ResponseIDTTL ago, as
	// TOOLGATE_RESPONSES' record says (Ensure sets it): partition 0's
	// suffixed subjects stay taken and read (zeroForms).
	lowered bool
}

// zeroForms reports whether TOOLGATE_IN and TOOLGATE_RESPONSES take
// partition 0's suffixed subjects (….0) and accumulate's durables read
// them: with P > 1, and at P = 1 for the claim period after P was lowered
// from P > 1, so that what the P before stored there drains (dropped from
// the stream's subjects and the durables' filters, it would wait unread).
func (s Settings) zeroForms() bool { return s.Fair.PartitionCount() > 1 || s.lowered }

// DefaultSettings are the production defaults.
func DefaultSettings() Settings {
	return Settings{
		Storage:       jetstream.FileStorage,
		Replicas:      1,
		DedupWindow:   2 * time.Minute,
		InMaxAge:      24 * time.Hour,
		DLQMaxAge:     7 * 24 * time.Hour,
		ResultMaxAge:  7 * 24 * time.Hour,
		AuditMaxAge:   7 * 24 * time.Hour,
		CallsMaxAge:   7 * 24 * time.Hour,
		IdemTTL:       24 * time.Hour,
		ResponseIDTTL: 7 * 24 * time.Hour,
		MaxMsgSize:    16 << 20,
		AckWait:       30 * time.Second,
		MaxDeliver:    10,
	}
}

// StreamConfigs returns every stream toolgate uses.
func (s Settings) StreamConfigs() []jetstream.StreamConfig {
	base := func(name string, subjects []string, age time.Duration) jetstream.StreamConfig {
		return jetstream.StreamConfig{
			Name:       name,
			Subjects:   subjects,
			Storage:    s.Storage,
			Replicas:   s.Replicas,
			MaxAge:     age,
			Duplicates: s.DedupWindow,
			MaxMsgSize: s.MaxMsgSize,
			Discard:    jetstream.DiscardOld,
		}
	}
	in := base(StreamIn, InSubjects(), s.InMaxAge)
	if lim := int32(InMaxBody + InHeaderRoom); in.MaxMsgSize <= 0 || in.MaxMsgSize > lim {
		in.MaxMsgSize = lim
	}
	resp := s.responsesConfig(base(StreamResponses, []string{InClaimedAll()}, s.responseIDTTL()), in.MaxMsgSize)
	// A stage's subject and its fairness lanes' of before the lanes'
	// streams (toolgate.gate.<stage> and toolgate.gate.<stage>.<lane>,
	// LegacyGateLane, kept so that old hops and old publishers drain): the
	// lanes' subjects (toolgate.gate.<stage>.l.<lane>, fair.go) and the
	// executor groups' subjects, deeper, are their own streams'.
	gates := base(StreamGates, []string{subjectGate + "*", subjectGate + "*.*"}, s.InMaxAge)
	// Work queue: a hop is deleted once its stage acked it, so the stream
	// holds only work in flight. Each stage's filter is disjoint.
	gates.Retention = jetstream.WorkQueuePolicy
	exec := base(StreamExecute, executeStreamSubjects(), s.InMaxAge)
	exec.Retention = jetstream.WorkQueuePolicy
	// A retry waits as a scheduled message (nats-server 2.12), not as a
	// pending delivery; schedules roll up their own subject.
	exec.AllowMsgSchedules, exec.AllowRollup = true, true
	// TOOLGATE_IN is narrowed before TOOLGATE_RESPONSES is made: a
	// deployment of before has toolgate.in.>, which overlaps it.
	// With P > 1 it takes partition 0 of the claimed subjects too, and
	// partitions 1 to P-1 are streams of their own (claimed_partitions.go).
	resp, respParts := s.responsesPartitionConfigs(resp)
	// So does TOOLGATE_IN of its stream events and batch responses, whose
	// partitions 1 to P-1 are streams of their own (in_partitions.go).
	in, inParts := s.inPartitionConfigs(in)
	out := append(append([]jetstream.StreamConfig{in}, inParts...), gates, resp)
	out = append(out, respParts...)
	// Each laned stage's lanes (fair.go, LaneStream): a work queue of its
	// own, so an acknowledgement's interest check walks that stage's lane
	// durables only, and in a cluster each has its own leader.
	for _, st := range table() {
		if !st.Laned {
			continue
		}
		lanes := base(LaneStream(st.Name), []string{GateLanes(st.Name)}, s.InMaxAge)
		lanes.Retention = jetstream.WorkQueuePolicy
		out = append(out, lanes)
	}
	out = append(out, exec)
	// Partitions 1 to P-1 of the laned stages' and execute's streams
	// (partitions.go), each like its partition 0.
	out = append(out, s.partitionStreamConfigs(out)...)
	// TOOLGATE_RESULTS on toolgate.results.*.* (narrowed in place from
	// toolgate.results.>, its messages kept), then the results of
	// partitions 1 to P-1 (results.go), each like it.
	results := base(StreamResults, ResultsSubjects(0), s.ResultsMaxAge())
	out = append(append(out, results), s.resultsPartitionConfigs(results)...)
	return append(out,
		base(StreamDLQ, []string{subjectDLQ + ">"}, s.DLQMaxAge),
		base(StreamAudit, []string{subjectAudit + ">"}, s.AuditMaxAge),
	)
}

// ResultsMaxAge is how long TOOLGATE_RESULTS keeps a result: ResultMaxAge,
// or AuditMaxAge when that is longer, since a result carries its call's
// audit event (wire.Result.Audit, issue 30) and the audit keeps its own
// retention.
func (s Settings) ResultsMaxAge() time.Duration { return max(s.ResultMaxAge, s.AuditMaxAge) }

// ConsumerConfig is the durable pull consumer that every replica of a stage
// shares: the stage's row in Table with s's defaults. An unknown stage gets
// a gate consumer on its Gate subject, as before the table.
func (s Settings) ConsumerConfig(stage string) jetstream.ConsumerConfig {
	st, ok := Lookup(stage)
	if !ok {
		return s.Config(Consumer{Name: stage, Subject: Gate(stage), Description: "toolgate " + stage + " gate"})
	}
	return s.Config(st.Consumer)
}

// TimerConsumerConfig is the durable consumer of the accumulate gate's
// stream timers (AccumulateTimer): the accumulate row's Extra consumer.
func (s Settings) TimerConsumerConfig() jetstream.ConsumerConfig {
	st, _ := Lookup(Accumulate)
	return s.Config(st.Extra[0])
}

// Config is the JetStream configuration of c, with s's defaults for what c
// leaves zero.
func (s Settings) Config(c Consumer) jetstream.ConsumerConfig {
	cfg := jetstream.ConsumerConfig{
		Durable:       c.Name,
		Description:   c.Description,
		FilterSubject: c.Subject,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.AckWait,
		MaxDeliver:    c.MaxDeliver,
		BackOff:       c.BackOff,
		MaxAckPending: c.MaxAckPending,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		Metadata:      c.Metadata,
	}
	if len(c.Subjects) > 0 {
		cfg.FilterSubject, cfg.FilterSubjects = "", c.Subjects
	}
	if cfg.AckWait == 0 {
		cfg.AckWait = s.AckWait
	}
	if cfg.MaxDeliver == 0 {
		cfg.MaxDeliver = s.MaxDeliver
	}
	if cfg.MaxAckPending == 0 {
		cfg.MaxAckPending = 2000
	}
	return cfg
}

// BucketConfigs returns every key-value bucket.
func (s Settings) BucketConfigs() []jetstream.KeyValueConfig {
	return append([]jetstream.KeyValueConfig{
		{Bucket: BucketTools, Description: "tool definitions", History: 16, Storage: s.Storage, Replicas: s.Replicas},
		{Bucket: BucketCalls, Description: "call status and history", History: 1, TTL: s.CallsMaxAge, Storage: s.Storage, Replicas: s.Replicas},
		{Bucket: BucketIdempotency, Description: "idempotency records (embedded store)", History: 1, TTL: s.IdemTTL, Storage: s.Storage, Replicas: s.Replicas},
		{Bucket: BucketApprovals, Description: "calls waiting for a human decision", History: 8, Storage: s.Storage, Replicas: s.Replicas},
		// A key per streamed response the accumulate gate has assembled (or
		// given up on), so later duplicates, timers and replicas leave it be.
		// It lives as long as the events it was assembled from.
		{Bucket: BucketResponses, Description: "streamed responses already assembled", History: 1, TTL: s.InMaxAge, Storage: s.Storage, Replicas: s.Replicas},
		// Marks of the calls of multi-call responses (tool, passed, failed)
		// and each atomic batch's one decision; see internal/gates/batch.go.
		{Bucket: BucketBatches, Description: "atomic batch coordination", History: 1, TTL: s.InMaxAge, Storage: s.Storage, Replicas: s.Replicas},
		// A key per response id turned into calls, holding a hash of what
		// came under it: the id is refused with other content.
		{Bucket: BucketResponseIDs, Description: "response ids used, with a hash of their content", History: 1, TTL: s.responseIDTTL(), Storage: s.Storage, Replicas: s.Replicas},
		// Executors' records of the requests they took: kept as long as the
		// execute gate's idempotency records, far longer than a signed
		// request lives (wire.DefaultExecLifetime), so a replay within its
		// lifetime is always caught and status queries answer after a restart.
		s.execReplayBucket(0),
		{Bucket: BucketToolsShadow, Description: "the shadow revision of the tool definitions", History: 1, Storage: s.Storage, Replicas: s.Replicas},
		{Bucket: BucketShadowReport, Description: "what the shadow revision would have decided differently, per tool", History: 1, Storage: s.Storage, Replicas: s.Replicas},
	}, s.execReplayPartitions()...)
}

// execReplayTTL is IdemTTL, at least 24h (never shorter than a request's
// lifetime, whatever IdemTTL a test sets).
func (s Settings) execReplayTTL() time.Duration {
	return max(s.IdemTTL, 24*time.Hour)
}

// responseIDTTL is ResponseIDTTL, or 7 days for Settings made without it.
func (s Settings) responseIDTTL() time.Duration {
	if s.ResponseIDTTL <= 0 {
		return 7 * 24 * time.Hour
	}
	return s.ResponseIDTTL
}
