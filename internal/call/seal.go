package call

import "time"

// Seal is one gate's signed statement that it passed this call: what it
// judged (call, tool, the hashes of the raw and canonical arguments, the
// definition revision, the approval) and its verdict. internal/seal makes
// and checks them; the execute gate runs only a call whose seals show every
// gate of the state machine passed exactly these arguments.
type Seal struct {
	Stage    string `json:"stage"`
	Status   Status `json:"status"`             // the verdict: the status the gate moved the call to
	Call     string `json:"call"`               // the call id it was made for
	Tool     string `json:"tool"`               // the tool name judged
	Raw      string `json:"raw,omitempty"`      // sha256 hex of the raw arguments (a carrier: its text)
	Args     string `json:"args,omitempty"`     // sha256 hex of the canonical arguments
	Rev      uint64 `json:"rev,omitempty"`      // the tool definition's revision
	Approval string `json:"approval,omitempty"` // policy: the human decision, when one was needed
	Key      string `json:"key"`                // the id of the key it was made with
	MAC      string `json:"mac"`                // base64url of the MAC
}

// Decision is the human decision an approved call carries.
type Decision struct {
	By   string    `json:"by"`
	Hash string    `json:"hash"` // the arguments hash approved
	At   time.Time `json:"at"`
}
