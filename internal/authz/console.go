package authz

import "github.com/toolgate/toolgate/streams"

// Console is the user of the operator console (`toolgate console`, and the
// console `toolgate up` serves): it reads what the pages show and does what
// an operator does from them — decide approvals as `toolgate approve` does,
// replay and purge dead letters as `toolgate dlq` does — and nothing else:
// it creates, changes or deletes no stream, bucket or durable, and reads no
// executor subject.
const Console = "console"

// consoleRole is Console's grants.
func consoleRole() *Permissions {
	var pub []string
	// Read and watch: status records, tool definitions (and their
	// history), the shadow; approvals are decided with compare-and-set; a replay
	// updates the call's status record (dlq.Replay).
	pub = append(pub, kvRead(streams.BucketTools)...)
	// The shadow page: the shadow revision and its report (counts, call
	// ids, no arguments); never the recorded input.
	pub = append(pub, kvRead(streams.BucketToolsShadow)...)
	pub = append(pub, kvRead(streams.BucketShadowReport)...)
	pub = append(pub, kvWrite(streams.BucketCalls)...)
	pub = append(pub, kvWrite(streams.BucketApprovals)...)
	// Streams read through short-lived ordered consumers: results (a
	// call's result, and its status record when it wrote none, issue 30;
	// a replay's outcomes, stage timings), dead letters and
	// audit events; a dead letter and an audit event fetched by sequence;
	// dead letters deleted by a purge.
	// The results of partitions 1 to DeployPartitions-1 too
	// (streams.ResultsStream), found by name (STREAM.NAMES, below).
	read := []string{streams.StreamResults, streams.StreamDLQ, streams.StreamAudit}
	for p := 1; p < DeployPartitions; p++ {
		read = append(read, streams.ResultsStream(p))
	}
	for _, st := range read {
		pub = append(pub,
			api("STREAM.INFO", st),
			api("CONSUMER.CREATE", st, ">"),
			api("CONSUMER.INFO", st, "*"),
			api("CONSUMER.MSG.NEXT", st, "*"),
			api("CONSUMER.DELETE", st, "*"),
			api("STREAM.MSG.GET", st),
			api("DIRECT.GET", st, ">"),
		)
	}
	pub = append(pub, api("STREAM.MSG.DELETE", streams.StreamDLQ))
	// The overview reads each stage's durable consumer (pending, ack
	// pending, pull requests waiting); it never fetches from one.
	for _, st := range streams.Table() {
		pub = append(pub, api("CONSUMER.INFO", st.Stream, st.Consumer.Name))
	}
	// And accumulate's durable of the claimed subjects (issue 30).
	pub = append(pub, api("CONSUMER.INFO", streams.StreamResponses, streams.AccumulateClaimed))
	// And the executor groups' durables, listed (issue 38: the overview's
	// banner when a group's circuit is open); listing is read only.
	pub = append(pub, api("STREAM.INFO", streams.StreamExecute), api("CONSUMER.LIST", streams.StreamExecute))
	// And the fairness lanes' durables (issue 37: each listed tenant's
	// backlog), listed; the gates' hops are read by sequence below for the
	// oldest waiting, never the producers' input in TOOLGATE_IN.
	pub = append(pub, api("STREAM.INFO", streams.StreamIn), api("CONSUMER.LIST", streams.StreamIn), api("CONSUMER.LIST", streams.StreamGates))
	// Accumulate's lane durables of the claimed whole responses (issue 30)
	// are in TOOLGATE_RESPONSES: listed the same way, never a message read.
	pub = append(pub, api("STREAM.INFO", streams.StreamResponses), api("CONSUMER.LIST", streams.StreamResponses))
	// And in TOOLGATE_RESPONSES' partitions (streams/claimed_partitions.go,
	// up to DeployPartitions), found by name: the same reads.
	for k := 1; k < DeployPartitions; k++ {
		rs := streams.ResponsesStream(k)
		pub = append(pub, api("STREAM.INFO", rs), api("CONSUMER.LIST", rs), api("CONSUMER.INFO", rs, streams.AccumulateClaimed))
	}
	// And in TOOLGATE_IN's partitions (streams/in_partitions.go): its main
	// and lane durables listed, never a message read.
	for k := 1; k < DeployPartitions; k++ {
		is := streams.InputStream(k)
		pub = append(pub, api("STREAM.INFO", is), api("CONSUMER.LIST", is), api("CONSUMER.INFO", is, streams.Accumulate))
	}
	// A call in flight has no status record until it waits or ends (issue
	// 30): the pages read its hop by sequence (internal/inflight), which
	// the dead letters' grant already shows of a failed call.
	pub = append(pub, api("STREAM.INFO", streams.StreamGates), api("STREAM.MSG.GET", streams.StreamGates), api("STREAM.MSG.GET", streams.StreamExecute))
	// The laned stages' lanes live in their own streams (issue 37): the
	// same reads there (their durables listed, their hops by sequence).
	// The overview's stage backlog counts their durables, each read.
	for _, ls := range streams.LaneStreams() {
		pub = append(pub, api("STREAM.INFO", ls), api("CONSUMER.LIST", ls), api("CONSUMER.INFO", ls, "*"), api("STREAM.MSG.GET", ls))
	}
	// And their partitions' streams (streams.PartitionStream, up to
	// DeployPartitions), found by name: the same reads, so a call in
	// flight is found in whichever partition it waits, and the overview's
	// backlogs, lanes and executor groups count every partition.
	pub = append(pub, api("STREAM.NAMES"))
	for _, st := range streams.PartitionedStages() {
		for p := 1; p < DeployPartitions; p++ {
			ps := streams.PartitionStream(st, p)
			pub = append(pub, api("STREAM.INFO", ps), api("CONSUMER.LIST", ps), api("CONSUMER.INFO", ps, "*"), api("STREAM.MSG.GET", ps))
		}
	}
	// A decision resumes the call at the policy gate; a replay republishes
	// a call at the stage that failed it (every gate a replay may enter:
	// the execute gate checks the call's seals itself) and input that never
	// became a call where it was first published.
	for _, st := range streams.Names() {
		if streams.Entry(st) != "" {
			pub = append(pub, streams.Gate(st))
		}
	}
	// A call replayed at execute enters its executor group's subject, as
	// policy's hop does (dlq's route, issue 38).
	pub = append(pub, streams.ExecuteGroups())
	pub = append(pub, ingest()...)
	return &Permissions{Publish: pub, Subscribe: []string{InboxPrefix(Console) + ".>"}}
}
