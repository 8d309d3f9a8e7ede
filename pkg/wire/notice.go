package wire

import (
	"encoding/json"
	"time"
)

// NoticeWaiting is the Kind of a Waiting notice. A message on a progress
// subject without a kind is a stream's progress event.
const NoticeWaiting = "waiting"

// WaitingForApproval is Waiting.For of a call that waits for a human
// decision (`toolgate approve|deny`).
const WaitingForApproval = "approval"

// Waiting is the notice toolgate publishes on a response's progress subject
// (Progress: toolgate.progress.<tenant>.<response-id>) when one of its calls
// stops to wait, so a producer, which may read its results and progress but
// no bucket, can tell a call waiting for a human from a slow or stopped
// pipeline. It is a plain NATS message, best effort, sent again if the call
// is redelivered; the call's result follows as usual once the wait ends. It
// carries no arguments.
type Waiting struct {
	Kind       string    `json:"kind"` // NoticeWaiting
	ResponseID string    `json:"response_id"`
	CallID     string    `json:"call_id"`
	Tool       string    `json:"tool"`
	For        string    `json:"for"` // WaitingForApproval
	Since      time.Time `json:"since"`
	Until      time.Time `json:"until,omitzero"` // when the wait ends by itself: an approval's expiry
}

// NoticeKind is the kind of a message read on a progress subject: "" for a
// stream's progress event (or anything that is not a JSON object).
func NoticeKind(data []byte) string {
	var probe struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(data, &probe) != nil {
		return ""
	}
	return probe.Kind
}
