package wire

import "encoding/json"

// ExecReply is an executor's answer on Exec(tool): {"ok": true, "result": ...}
// or {"ok": false, "error": "..."}.
type ExecReply struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// HeaderQuery marks a request that asks about a call instead of running it:
// "Toolgate-Query: status" with the call's idempotency key. An executor that
// does not know the header must refuse the request's empty body; one that
// knows it answers an ExecStatusReply.
const HeaderQuery = "Toolgate-Query"

// QueryStatus is the only value of HeaderQuery.
const QueryStatus = "status"

// ExecStatusReply answers "did call X happen?": {"known": true, "ok": ...,
// "result": ..., "error": ...} when the executor has the call's idempotency
// key, {"known": false} when it has not. Known false does not prove the call
// never ran (an executor may forget), so the gate still ends the call
// outcome_unknown.
type ExecStatusReply struct {
	Known  bool            `json:"known"`
	OK     bool            `json:"ok,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// Reply is the answer a known status stands for.
func (s ExecStatusReply) Reply() ExecReply {
	return ExecReply{OK: s.OK, Result: s.Result, Error: s.Error}
}

// HeaderExecRecord is set on an executor's answer to a request it did not run
// because of its durable record of the requests it took (pkg/toolserver):
// RecordStored (the answer is the stored one of the first run),
// RecordRunning (taken before and not finished, or cut short: the outcome is
// unknown) or RecordUnavailable (the record could not be read or written:
// not run, safe to retry).
const HeaderExecRecord = "Toolgate-Exec-Record"

// Values of HeaderExecRecord.
const (
	RecordStored      = "stored"
	RecordRunning     = "running"
	RecordUnavailable = "unavailable"
)
