package streams

import (
	"slices"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/pkg/wire"
)

// Consumer is one durable pull consumer of a stage, as data. Its Name and
// Subject are a durable's identity and never change: a renamed durable
// redelivers everything, and a changed filter on the work queue makes
// CreateOrUpdateConsumer fail. The one change made, a laned stage's main
// durable reading its old lanes too (Subjects), is applied by Ensure
// (ensureLaneInputs), which deletes what overlaps first.
type Consumer struct {
	Name    string // durable name == subject token
	Stream  string
	Subject string // filter subject
	// Subjects, when set, are the filter subjects instead of Subject
	// (nats-server 2.10): an accumulate lane's tenants.
	Subjects []string
	// FromNow: a new durable starts after the stream's last message, and
	// an update keeps where it started (accumulate's lanes; ensureFromNow).
	FromNow     bool
	Description string
	// MaxDeliver: 0 is Settings.MaxDeliver; -1 is unlimited.
	MaxDeliver int
	// AckWait: 0 is Settings.AckWait (--ack-wait / TOOLGATE_ACK_WAIT).
	AckWait time.Duration
	// BackOff is the server's redelivery schedule after an ack timeout, and
	// the worker's nak delays; nil: none (AckWait, and worker.Backoff). The
	// server then takes AckWait from BackOff[0], and needs len(BackOff) <=
	// MaxDeliver unless MaxDeliver is -1.
	BackOff []time.Duration
	// MaxAckPending: 0 is 2000.
	MaxAckPending int
	// Metadata is stored with the consumer (nats-server 2.10); nil: none.
	Metadata map[string]string
}

// Bucket is a key-value bucket a stage uses besides the ones every stage
// reads (tools), for its least-privilege user.
type Bucket struct {
	Name  string
	Write bool // read and write; false: read and watch only
}

// Stage is one stage of the pipeline as data: its consumers, where calls
// come from and go, and what its user may touch. Everything else about
// stages (routing, Ensure, authz, error messages, manifests) is derived
// from Table.
type Stage struct {
	Name   string
	Stream string // the stream its main consumer reads
	// Inputs are the statuses routed to this stage (Next); none for
	// accumulate, which creates calls.
	Inputs []call.Status
	// Entry is the status a replay puts a call in to enter this stage; ""
	// where a replay cannot enter (accumulate, repair).
	Entry    call.Status
	Consumer Consumer // the main durable
	// Laned: the stage takes its input in fairness lanes besides its main
	// durable, one durable per lane (Settings.LaneConsumers).
	Laned bool
	Extra []Consumer // further durables of the same stage
	// Publishes are subjects its user may publish to beyond routing,
	// results, dead letters, audit and status records.
	Publishes []string
	Buckets   []Bucket
	// Reads are subjects of its Stream it reads through short-lived
	// consumers (accumulate reads back a stream's stored events).
	Reads []string
}

// Table returns the stages in pipeline order, a fresh copy each call.
func Table() []Stage {
	out := slices.Clone(table())
	for i, st := range out {
		out[i].Inputs = slices.Clone(st.Inputs)
		out[i].Extra = slices.Clone(st.Extra)
		out[i].Publishes = slices.Clone(st.Publishes)
		out[i].Buckets = slices.Clone(st.Buckets)
		out[i].Reads = slices.Clone(st.Reads)
	}
	return out
}

// table is the stage table, built once: the lookups below run on every
// hop of every call (Next twice per output) and read it without copying.
// Nothing writes to it after it is built.
var table = sync.OnceValue(buildTable)

func buildTable() []Stage {
	gate := func(name string, inputs []call.Status, entry call.Status) Stage {
		st := Stage{Name: name, Stream: StreamGates, Inputs: inputs, Entry: entry, Laned: name != Execute, Consumer: Consumer{
			Name: name, Stream: StreamGates, Subject: Gate(name), Description: "toolgate " + name + " gate",
		}}
		if st.Laned { // its lanes are LaneStream's; what was published to the old lanes drains here (fair.go)
			st.Consumer.Subjects = []string{Gate(name), LegacyGateLane(name, "*")}
		}
		return st
	}
	parse := gate(Parse, []call.Status{call.Received}, call.Received)
	validate := gate(Validate, []call.Status{call.Parsed}, call.Parsed)
	business := gate(Business, []call.Status{call.Validated}, call.Validated)
	policy := gate(Policy, []call.Status{call.BusinessValid}, call.BusinessValid)
	// Calls waiting for a human live in the approvals bucket; a decided or
	// expired one comes back through the policy gate's own input. The
	// sweeper settles a call whose approval record is garbage from its
	// status record.
	// A call it leaves waiting for a human is announced to its producer on
	// the response's progress subject (wire.Waiting).
	policy.Publishes = []string{batchMark("passed"), Gate(Policy), ProgressAll()}
	// It compares every call with the shadow revision of the tools, if
	// one is applied, and counts the differences (internal/shadow).
	policy.Buckets = []Bucket{{Name: BucketApprovals, Write: true}, {Name: BucketCalls},
		{Name: BucketToolsShadow}, {Name: BucketShadowReport, Write: true}}
	// Validate and business compare the calls they refuse with the shadow
	// too, so its report counts what a looser or stricter schema or rule
	// would have let through or stopped.
	validate.Buckets = []Bucket{{Name: BucketToolsShadow}, {Name: BucketShadowReport, Write: true}}
	business.Buckets = []Bucket{{Name: BucketToolsShadow}, {Name: BucketShadowReport, Write: true}}
	repair := gate(Repair, []call.Status{call.InvalidJSON, call.Truncated, call.SchemaInvalid, call.NoSuchTool}, "")
	// Execute's lanes come with its executor groups' durables (issue 37's
	// merge); until then it reads its one durable.
	execute := gate(Execute, []call.Status{call.Approved}, call.Approved)
	// It decides atomic batches.
	execute.Publishes = []string{Exec(">")}
	execute.Buckets = []Bucket{{Name: BucketIdempotency, Write: true}, {Name: BucketBatches, Write: true}, {Name: BucketCalls}}
	accumulate := Stage{
		Name: Accumulate, Stream: StreamIn,
		// Every subject of TOOLGATE_IN (InSubjects; toolgate.in.> before
		// the claimed subjects had a stream of their own: a limits
		// stream's durable keeps its place when its filter changes).
		Consumer: Consumer{Name: Accumulate, Stream: StreamIn, Subjects: InSubjects(), Description: "toolgate " + Accumulate + " gate"},
		// A timer bounces (nak with delay) for as long as its stream is
		// open, so deliveries are unlimited: it must never be dropped after
		// MaxDeliver while the stream is still active.
		Extra: []Consumer{{
			Name: AccumulateTimer, Stream: StreamGates, Subject: TimerSubject(),
			Description: "toolgate accumulate gate: idle timers of open streams", MaxDeliver: -1,
		}},
		// It claims the response ids of input on other subjects by a claim
		// message on the claimed subject, and reads what holds a claimed
		// subject back (claimed.go); the response-ids bucket of before is
		// only read, in the week after the upgrade. With P > 1 a claimed
		// subject is stored in a partition (claimed_partitions.go), and
		// nats-server checks a publish's permission on the subject it maps
		// it to, with the partition.
		Publishes: []string{TimerSubject(), ResponseDone("*"), ProgressAll(), InClaimedAll(), InClaimedAll() + ".*", wire.ClaimedLast(InClaimedAll()), wire.ClaimedLastAnywhere(InClaimedAll())},
		Buckets:   []Bucket{{Name: BucketResponses}, {Name: BucketResponseIDs}},
		Reads:     []string{InStream(">"), InTenantStreams()},
	}
	return []Stage{accumulate, parse, validate, business, policy, repair, execute}
}

// batchMark is the subject of one kind of mark of any batch.
func batchMark(kind string) string { return "$KV." + BucketBatches + ".*." + kind + ".*" }

// Names lists the stage names in pipeline order.
func Names() []string {
	var names []string
	for _, st := range table() {
		names = append(names, st.Name)
	}
	return names
}

// Lookup returns the stage named name.
func Lookup(name string) (Stage, bool) {
	for _, st := range Table() {
		if st.Name == name {
			return st, true
		}
	}
	return Stage{}, false
}

// Consumers lists every durable of a stage: the main one, then its Extra.
func (st Stage) Consumers() []Consumer { return append([]Consumer{st.Consumer}, st.Extra...) }

// IsStage reports whether s names a stage.
func IsStage(s string) bool { return row(s) != nil }

// Next names the stage that handles a call in status s, or "" when no stage
// does (terminal, or waiting for a human).
func Next(s call.Status) string {
	for _, st := range table() {
		if slices.Contains(st.Inputs, s) {
			return st.Name
		}
	}
	return ""
}

// Entry is the status a call is put in to enter stage, for a replay.
func Entry(stage string) call.Status {
	if st := row(stage); st != nil {
		return st.Entry
	}
	return ""
}

// StreamOf names the stream a stage consumes from.
func StreamOf(stage string) string {
	if st := row(stage); st != nil {
		return st.Stream
	}
	return StreamGates
}

// Input is the subject a stage consumes.
func Input(stage string) string {
	if st := row(stage); st != nil {
		return st.Consumer.Subject
	}
	return Gate(stage)
}

// row is stage's row of the table, read only; nil for no stage.
func row(stage string) *Stage {
	t := table()
	for i := range t {
		if t[i].Name == stage {
			return &t[i]
		}
	}
	return nil
}
