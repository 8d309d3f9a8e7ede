package ingest

// Stream limits. Every number a producer controls (Toolgate-Seq, the count
// and size of a stream's events) is checked against one of these before it
// allocates, loops or re-reads.
const (
	// DefaultMaxStreamEvents bounds Toolgate-Seq (1..N) and how many events
	// one streamed response may store.
	DefaultMaxStreamEvents = 10_000
	// DefaultProgressBudget bounds the bytes the progress cache holds for
	// all open streams together.
	DefaultProgressBudget = 32 << 20
	// assemblyCap and assemblyBudget bound the cache of partly assembled
	// streams (an optimisation: a stream missing from it is read again).
	assemblyCap    = 1024
	assemblyBudget = 64 << 20
)

// Rejection codes of streamed input (dead-letter subjects and results).
const (
	CodeSeqOutOfRange = "seq_out_of_range" // one event refused; the stream goes on without it
	CodeTooManyEvents = "too_many_events"  // the stream stored more events than MaxStreamEvents
	CodeStreamTooBig  = "too_large"        // the stream's events add up to more than MaxBody
	// CodeUndecodableEvent: an event the provider's decoder refused (not
	// JSON, a duplicate key, another provider's shape); nothing executes.
	CodeUndecodableEvent = "undecodable_event"
)

func (a *Accumulate) maxEvents() int {
	if a.MaxStreamEvents <= 0 {
		return DefaultMaxStreamEvents
	}
	return a.MaxStreamEvents
}

func (a *Accumulate) progressBudget() int {
	if a.ProgressBudget <= 0 {
		return DefaultProgressBudget
	}
	return a.ProgressBudget
}
