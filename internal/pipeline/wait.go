package pipeline

import "time"

// Wait kinds: what a call that is not moving waits for.
const (
	WaitExecutor = "executor" // no executor answers on the tool's subject: retried
	WaitApproval = "approval" // a human decision (policy)
	WaitRetry    = "retry"    // a transient failure of a dependency (Redis, NATS): retried
	WaitLimit    = "limit"    // a limit with on_exceed: wait (Limit names it): held until its window allows
)

// Wait is what a call waits for (StatusRecord.Waiting), written by the
// stage that holds it whenever the wait starts or its attempt count moves,
// and cleared by the call's next transition. `toolgate status` prints it.
type Wait struct {
	Stage   string    `json:"stage"`
	For     string    `json:"for"`              // WaitExecutor, WaitApproval, WaitRetry, WaitLimit
	Detail  string    `json:"detail,omitempty"` // e.g. "no executor listens on toolgate.exec.transfer_funds"
	Attempt int       `json:"attempt,omitempty"`
	Of      int       `json:"of,omitempty"` // attempts before the call is dead-lettered; 0: no bound
	Since   time.Time `json:"since"`
	Next    time.Time `json:"next,omitzero"`   // the next attempt
	Until   time.Time `json:"until,omitzero"`  // when the wait ends by itself (an approval's expiry)
	By      []string  `json:"by,omitempty"`    // who may end it (an approval's approver roles)
	Limit   string    `json:"limit,omitempty"` // the limit that holds it (WaitLimit)
}
