package batch

import "time"

// Decision is an atomic batch's one decision.
type Decision struct {
	Run    bool      `json:"run"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
}
