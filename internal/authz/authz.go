// Package authz derives least-privilege NATS permissions for toolgate: one
// user per stage that may consume only its own durable consumer and publish
// only its own outputs, so a compromised or buggy gate cannot skip the gates
// after it; only the execute stage may publish to toolgate.exec.>. Executors
// are per group (executor-<group>: exactly its tools' subjects, answering
// only through allow_responses), producers per tenant (producer-<tenant>:
// ingest, and only that tenant's results and progress), and every user reads
// replies only under its own inbox prefix (InboxPrefix). The same users
// serve the embedded server of `toolgate up` (internal/natsusers) and the
// nats-server configuration in deploy/ (Render).
//
// Stages never create streams, buckets or consumers under these permissions:
// the admin user applies the topology once (`toolgate streams apply`), and a
// stage started with stage.Config.SkipEnsure only looks its consumer up.
package authz

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// Users besides the stages.
const (
	// Admin may do everything: apply streams and tools, replay, inspect.
	Admin = "admin"
	// Producer publishes provider responses of no tenant and reads their
	// results (wire.NoTenant); a tenant's producer is ProducerUser(tenant).
	Producer = "producer"
	// Executor is the user of the example executor group (ExampleGroup):
	// it serves the example tools and nothing else.
	Executor = "executor-" + ExampleGroup
	// Client is the user an unauthenticated local connection gets from
	// `toolgate up`: it may publish provider responses and nothing else —
	// no results, no executor subjects, no inbox. It is not part of Names,
	// so deployments do not have it.
	Client = "client"
)

// Permissions are one user's allow lists. A nil *Permissions means
// unrestricted (the admin).
type Permissions struct {
	Publish   []string
	Subscribe []string
	// Responses lets the user answer requests sent to it (executors) without
	// a publish grant for the requester's reply subject.
	Responses bool
}

// InboxPrefix is the inbox prefix a user's connection must use
// (nats.CustomInboxPrefix): each user reads replies only under its own
// prefix, outside _INBOX.>, so no other user can subscribe to the replies
// and pulled messages meant for a stage.
func InboxPrefix(user string) string { return "_INBOX_" + user }

// Routes lists the stages a stage may hand a call to, derived from the call
// state machine: every status the stage can move a call into (through
// statuses no stage consumes, such as repairing) whose next hop is a stage.
// Parse, for example, routes only to validate and repair, never to policy or
// execute.
func Routes(stage string) []string {
	var seen []call.Status
	var routes []string
	var walk func(s call.Status)
	walk = func(s call.Status) {
		if slices.Contains(seen, s) {
			return
		}
		seen = append(seen, s)
		for _, to := range call.Successors(s) {
			if next := streams.Next(to); next != "" {
				if !slices.Contains(routes, next) {
					routes = append(routes, next)
				}
				continue
			}
			walk(to) // an intermediate status the same gate moves on from
		}
	}
	for _, s := range inputs(stage) {
		walk(s)
	}
	if stage == streams.Accumulate {
		routes = append(routes, streams.Next(call.Received)) // it creates calls
	}
	names := streams.Names()
	slices.SortFunc(routes, func(a, b string) int { return slices.Index(names, a) - slices.Index(names, b) })
	return routes
}

// inputs are the statuses in which calls reach stage.
func inputs(stage string) []call.Status {
	st, _ := streams.Lookup(stage)
	return st.Inputs
}

// Stage returns the permissions of a stage's user with the default number
// of fairness lanes (StageLanes).
func Stage(stage string) (Permissions, error) { return StageLanes(stage, 0) }

// StageLanes returns the permissions of a stage's user: what every stage
// needs, plus its row in streams.Table (further consumers, publishes,
// buckets and reads). A laned gate stage consumes any durable of its own
// lanes' stream (streams.LaneStream), whatever L; accumulate its lane
// durables, each named (lanes: L, 0 the default); each publishes to the
// lanes of the stages it routes to.
func StageLanes(stage string, lanes int) (Permissions, error) {
	return StageLayout(stage, lanes, 1)
}

// StageLayout is StageLanes with P partitions of the gate stages'
// streams (streams.Partition; 0 or 1: none): a partitioned stage's user
// also consumes any durable of its own partition streams 1 to P-1
// (TOOLGATE_GATE_<STAGE>_<p>, each holding only that stage's durables),
// lists stream names to find them, and publishes to the partitions of the
// stages it routes to.
func StageLayout(stage string, lanes, partitions int) (Permissions, error) {
	st, ok := streams.Lookup(stage)
	if !ok {
		return Permissions{}, fmt.Errorf("authz: unknown stage %q", stage)
	}
	if lanes <= 0 { // automatic: grant the default lanes, which the stages use once a tenant list is set
		lanes = streams.DefaultLanes
	}
	pub := consume(st.Stream, stage)
	if st.Laned { // its lanes: every durable of its own stream and of no other (streams.LaneStream)
		pub = append(pub, consumeStream(streams.LaneStream(stage))...)
	}
	if streams.Partitioned(stage) { // its partitions' streams, whichever exist: found by name, whatever P
		pub = append(pub, api("STREAM.NAMES"))
	}
	if st.Laned {
		for p := 1; p < partitions; p++ {
			pub = append(pub, consumeStream(streams.PartitionStream(stage, p))...)
		}
	}
	if stage == streams.Accumulate { // its main durable on TOOLGATE_RESPONSES, lane durables per index that carries a listed tenant
		for _, d := range streams.Durables(stage, lanes)[1:] {
			pub = append(pub, consume(streams.DurableStream(stage, d), d)...)
		}
		// TOOLGATE_RESPONSES' partitions (streams/claimed_partitions.go):
		// listed by name, its P read from the stream's metadata, and the
		// claimed durables in each partition below P.
		pub = append(pub, api("STREAM.NAMES"), api("STREAM.INFO", streams.StreamResponses))
		for p := 1; p < partitions; p++ {
			for _, d := range streams.Durables(stage, lanes)[1:] {
				if streams.DurableStream(stage, d) == streams.StreamResponses {
					pub = append(pub, consume(streams.ResponsesStream(p), d)...)
				}
			}
		}
		// TOOLGATE_IN's partitions (streams/in_partitions.go): its main
		// and lane durables there, and a stream's events read back there
		// (st.Reads, below, for each partition below P).
		for p := 1; p < partitions; p++ {
			for _, d := range streams.Durables(stage, lanes) {
				if streams.DurableStream(stage, d) == streams.StreamIn {
					pub = append(pub, consume(streams.InputStream(p), d)...)
				}
			}
		}
	}
	pub = append(pub, kvRead(streams.BucketTools)...) // the registry watches definitions
	pub = append(pub,
		streams.CallStatus("*"), // status record put into the calls bucket
		streams.DLQ("*", ">"),
		streams.Audit(">"),
	)
	// Results: a call's in its partition's results stream (streams.ResultsIn),
	// toolgate.results.<tenant>.<response-id> and, for partitions 1 to
	// P-1, the same with .p<k> after it; nothing else under toolgate.results.
	for p := range max(partitions, 1) {
		pub = append(pub, streams.ResultsSubjects(p)...)
	}
	for _, next := range Routes(stage) {
		pub = append(pub, streams.Gate(next))
		if streams.Laned(next) {
			// Its lanes, and the lanes of before their stream
			// (toolgate.gate.<next>.<lane>, read by next's main durable),
			// so a process not yet upgraded hands its calls on during a
			// rolling upgrade; both reach next and nothing else.
			pub = append(pub, streams.GateLanes(next), streams.LegacyGateLane(next, "*"))
			for p := 1; p < partitions; p++ { // the call's partition of next
				pub = append(pub, streams.PartitionGate(next, p), streams.PartitionGateLane(next, "*", p))
			}
		}
		if next == streams.Execute { // an approved call goes to its executor group
			pub = append(pub, streams.ExecuteGroups())
			for p := 1; p < partitions; p++ {
				pub = append(pub, streams.PartitionExecuteGroups(p))
			}
		}
	}
	if stage == streams.Execute {
		pub = append(pub, executeGroups(0)...)
		for p := 1; p < partitions; p++ {
			// and its backlog there (metrics: its calls and retries waiting)
			pub = append(pub, append(executeGroups(p), api("STREAM.INFO", streams.PartitionStream(streams.Execute, p)))...)
		}
	}
	// Batch marks (batch.Marks): any stage may record a failure; a
	// stage that hands calls to parse records their tool; a dry run, which
	// passes every gate without executing, is recorded as passed (policy's
	// row publishes it).
	pub = append(pub, batchMark("failed"))
	if slices.Contains(Routes(stage), streams.Parse) {
		pub = append(pub, batchMark("tool"))
	}
	for _, c := range st.Extra {
		pub = append(pub, consume(c.Stream, c.Name)...)
	}
	pub = append(pub, st.Publishes...)
	for _, b := range st.Buckets {
		if b.Write {
			pub = append(pub, kvWrite(b.Name)...)
		} else {
			pub = append(pub, kvRead(b.Name)...)
		}
	}
	// Reading stored events back goes through a short-lived consumer
	// filtered on the subject, deleted after; accumulate's in each of
	// TOOLGATE_IN's partitions below P too (streams/in_partitions.go).
	readIn := []string{st.Stream}
	if stage == streams.Accumulate {
		for p := 1; p < partitions; p++ {
			readIn = append(readIn, streams.InputStream(p))
		}
	}
	for _, subject := range st.Reads {
		for _, s := range readIn {
			pub = append(pub,
				api("STREAM.INFO", s),
				api("CONSUMER.CREATE", s, "*", subject),
				api("CONSUMER.MSG.NEXT", s, "*"),
				api("CONSUMER.DELETE", s, "*"),
			)
		}
	}
	return Permissions{Publish: pub, Subscribe: []string{InboxPrefix(stage) + ".>"}}, nil
}

// consume grants fetching from and acking a durable consumer, and nothing on
// any other consumer.
func consume(stream, durable string) []string {
	return []string{
		api("CONSUMER.INFO", stream, durable),
		api("CONSUMER.MSG.NEXT", stream, durable),
		"$JS.ACK." + stream + "." + durable + ".>",
	}
}

// consumeStream grants fetching from, acknowledging and reading any
// durable of stream (a laned stage's own lanes' stream): no create,
// update or delete, which the admin does (streams.Ensure).
func consumeStream(stream string) []string {
	return []string{
		api("CONSUMER.INFO", stream, "*"),
		api("CONSUMER.MSG.NEXT", stream, "*"),
		"$JS.ACK." + stream + ".*.>",
	}
}

// executeGroups grants execute its executor groups' durables (issue 38):
// every consumer of streams.StreamExecute and of no other stream, created
// only with a filter on the groups' subjects (the create API that names the
// durable and its filter in the subject, nats-server 2.9), paused and
// resumed by its circuit breakers.
// Partition p's stream (streams.PartitionStream) likewise, on its own
// subjects.
func executeGroups(p int) []string {
	s := streams.PartitionStream(streams.Execute, p)
	return []string{
		api("CONSUMER.CREATE", s, "*", streams.PartitionExecuteGroups(p)),
		api("CONSUMER.INFO", s, "*"),
		api("CONSUMER.MSG.NEXT", s, "*"),
		api("CONSUMER.PAUSE", s, "*"),
		"$JS.ACK." + s + ".*.>",
		streams.PartitionExecuteSchedules(p), // a retry waits as a scheduled message
	}
}

// batchMark grants writing one kind of mark into the batches bucket.
func batchMark(kind string) string {
	return "$KV." + streams.BucketBatches + ".*." + kind + ".*"
}

// kvRead grants reading and watching a key-value bucket.
func kvRead(bucket string) []string {
	kvs := "KV_" + bucket
	return []string{
		api("STREAM.INFO", kvs),
		api("DIRECT.GET", kvs, ">"),
		api("STREAM.MSG.GET", kvs),
		// A watch is an ordered push consumer, recreated after a gap.
		api("CONSUMER.CREATE", kvs, ">"),
		api("CONSUMER.DELETE", kvs, "*"),
		"$JS.FC." + kvs + ".>",
	}
}

// kvWrite grants reading and writing a key-value bucket.
func kvWrite(bucket string) []string {
	return append(kvRead(bucket), "$KV."+bucket+".>")
}

func api(op string, tokens ...string) string {
	s := "$JS.API." + op
	for _, t := range tokens {
		s += "." + t
	}
	return s
}

// Role returns the permissions of user in DefaultConfig; nil for the admin.
func Role(user string) (*Permissions, error) { return DefaultConfig().Role(user) }

// Names lists the users of DefaultConfig.
func Names() []string { return DefaultConfig().Names() }

// Role returns the permissions of user; nil for the admin.
func (c Config) Role(user string) (*Permissions, error) {
	switch {
	case user == Admin:
		return nil, nil
	case user == Client:
		return &Permissions{Publish: ingest()}, nil
	case user == Console:
		return consoleRole(), nil
	case streams.IsStage(user):
		p, err := StageLayout(user, c.Lanes, c.Partitions)
		return &p, err
	}
	for _, t := range append([]string{""}, c.Tenants...) {
		if u := ProducerUser(t); u == user {
			return &Permissions{
				// Its tenant's own subjects and nothing shared
				// (tenantIngest); its own asserting subject too
				// (wire.InAsResponse): accumulate grants what it asserts
				// only where the deployment lists it
				// (--identity-assert-users).
				Publish: append(tenantIngest(t), wire.InAsResponse(u)),
				// Results and progress are published per tenant
				// (wire.Results), so a producer sees only its own.
				Subscribe: []string{wire.TenantResults(t), wire.TenantProgress(t), InboxPrefix(u) + ".>"},
			}, nil
		}
	}
	for _, g := range c.Groups {
		if ExecutorUser(g.Name) == user {
			return executor(g, c.Partitions), nil
		}
	}
	return nil, fmt.Errorf("authz: unknown user %q (users: %s)", user, strings.Join(c.Names(), ", "))
}

// ingest is what a producer publishes: responses and stream events, the
// events also as the server maps them to a partition
// (streams/in_partitions.go: nats-server checks a publish's permission on
// the mapped subject; accumulate refuses an event in a partition the
// mapping would not pick).
func ingest() []string {
	return []string{streams.SubjectInResponse, streams.InStream("*"), streams.InStream("*") + ".*"}
}

// tenantIngest is what tenant's producer publishes: the shared subjects for
// no tenant, else only the tenant's own (wire.InTenantResponse, its batch
// subject wire.InTenantBatch, and wire.InTenantStream), where accumulate
// takes the tenant from the subject.
// A tenant's producer gets nothing shared: there it could squat the ids of
// the tenant-less producer.
func tenantIngest(tenant string) []string {
	if tenant == "" {
		return ingest()
	}
	return []string{wire.InTenantResponse(tenant), wire.InTenantBatch(tenant), wire.InTenantStream(tenant, "*"),
		// Its claimed subjects (streams/claimed.go), and what holds one
		// read back, its own and no other tenant's (pkg/producer: a
		// response id refused at publish).
		wire.InTenantClaimed(tenant, "*"), wire.ClaimedLast(wire.InTenantClaimed(tenant, "*")),
		// and in any partition (streams/claimed_partitions.go), still its
		// own: nats-server checks a publish's permission on the subject it
		// maps it to, with the partition (accumulate refuses a copy in a
		// partition the mapping would not pick).
		wire.InTenantClaimed(tenant, "*") + ".*", wire.ClaimedLastAnywhere(wire.InTenantClaimed(tenant, "*")),
		// Its batch responses and stream events as the server maps them
		// to TOOLGATE_IN's partitions (streams/in_partitions.go), still
		// its own, for the same reason.
		wire.InTenantBatch(tenant) + ".*", wire.InTenantStream(tenant, "*") + ".*"}
}

// executor grants an executor group its tools' subjects and the discovery
// subjects of the NATS micro service named after the group (pkg/toolserver:
// toolserver.New(nc, group, version)); it answers through allow_responses
// only, so it cannot forge anyone's replies. It publishes only to keep its
// durable record of the requests it took (streams.BucketExecReplay, and
// with P partitions each partition's bucket, streams.ExecReplayBucket): its
// own tools' keys, read and written, with the replies under its own inbox.
func executor(g Group, partitions int) *Permissions {
	var sub, pub []string
	for p := range max(partitions, 1) {
		kvs := "KV_" + streams.ExecReplayBucket(p)
		pub = append(pub, api("STREAM.INFO", kvs))
		for _, t := range g.Tools {
			pub = append(pub, streams.ExecReplayKeysIn(p, t), api("DIRECT.GET", kvs, streams.ExecReplayKeysIn(p, t)))
		}
	}
	for _, t := range g.Tools {
		sub = append(sub, streams.Exec(t))
	}
	for _, verb := range []string{"PING", "INFO", "STATS"} {
		sub = append(sub, "$SRV."+verb)
	}
	sub = append(sub, "$SRV.*."+g.Name, "$SRV.*."+g.Name+".*", InboxPrefix(ExecutorUser(g.Name))+".>")
	return &Permissions{Publish: pub, Subscribe: sub, Responses: true}
}

// Names lists every user: the admin, each stage, the tenant-less producer
// and each tenant's, each executor group's, and the console's.
func (c Config) Names() []string {
	names := append(append([]string{Admin}, streams.Names()...), Producer)
	for _, t := range c.Tenants {
		names = append(names, ProducerUser(t))
	}
	for _, g := range c.Groups {
		names = append(names, ExecutorUser(g.Name))
	}
	return append(names, Console)
}
