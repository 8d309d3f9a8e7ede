package wire

import (
	"encoding/json"
	"time"
)

// Step is one entry of a call's history.
type Step struct {
	Stage  string    `json:"stage"`
	Status Status    `json:"status"`
	At     time.Time `json:"at"`
	Note   string    `json:"note,omitempty"`
}

// Result is the message published on toolgate.results.<response-id>: the
// call's terminal outcome, and Message, the tool-result item in the
// provider's own format, ready to append to the conversation.
type Result struct {
	CallID         string          `json:"call_id"`
	ResponseID     string          `json:"response_id"`
	ProviderCallID string          `json:"provider_call_id,omitempty"`
	Provider       string          `json:"provider"`
	Tool           string          `json:"tool"`
	Status         Status          `json:"status"`
	Failure        Status          `json:"failure,omitempty"`
	OK             bool            `json:"ok"`
	Errors         []string        `json:"errors,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	RepairAttempts int             `json:"repair_attempts"`
	Source         string          `json:"source"`
	Text           string          `json:"text"`
	Message        json.RawMessage `json:"message"`
	History        []Step          `json:"history"`
	// ResponseCalls is how many calls the response proposed: a producer
	// holds every outcome of the response once it holds this many distinct
	// call ids (producer.Watch.AwaitAll). 0 (absent) from a toolgate that
	// predates it.
	ResponseCalls int `json:"response_calls,omitempty"`
	// The fields below make the result the call's final status record when
	// toolgate wrote none (a call that neither waited nor was repaired nor
	// replayed: `toolgate status` reads its result instead), as the record
	// shows them: never the raw arguments, only their hash. All are absent
	// from a toolgate that predates them, and each is absent when empty.
	Model          string `json:"model,omitempty"`
	Replays        int    `json:"replays,omitempty"`         // operator replays of the call so far
	ToolRevision   uint64 `json:"tool_revision,omitempty"`   // the tool definitions' revision the call was checked against
	ArgumentsHash  string `json:"arguments_hash,omitempty"`  // sha256 of the arguments as the model wrote them
	IdempotencyKey string `json:"idempotency_key,omitempty"` // the key the executor was given
	// Identity is how the call's identity was established: verified,
	// asserted or unverified.
	Identity string `json:"identity,omitempty"`
	// Audit is the call's audit event (redacted: never the raw arguments),
	// carried in its result so that one stored message ends a call (issue
	// 30). Absent from a toolgate that predates it: its audit events are on
	// toolgate.audit.<status> only.
	Audit *AuditEvent `json:"audit,omitempty"`
}

// ResponseResult is the result of a response as a whole, published on
// toolgate.results.<response-id> when it yields no call at all: no tool
// calls, or input that could not be read.
type ResponseResult struct {
	ResponseID string   `json:"response_id"`
	Provider   string   `json:"provider"`
	Status     Status   `json:"status"`
	OK         bool     `json:"ok"`
	Errors     []string `json:"errors,omitempty"`
	Text       string   `json:"text,omitempty"`
}
