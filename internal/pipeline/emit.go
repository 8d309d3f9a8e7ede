package pipeline

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/batch"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/internal/wirejson"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// Result is the message published on toolgate.results.<response-id>
// (wire.Result, the public contract). The alias keeps its callers (dlq,
// the CLI) until WP-Z points them at wire.
type Result = wire.Result

// StatusRecord is what the calls bucket holds per call id: everything but
// the raw arguments, which live only in the dead-letter stream.
type StatusRecord struct {
	CallID         string      `json:"call_id"`
	ResponseID     string      `json:"response_id"`
	Tool           string      `json:"tool"`
	Provider       string      `json:"provider"`
	Model          string      `json:"model,omitempty"`
	Source         string      `json:"source"`
	Status         call.Status `json:"status"`
	Failure        call.Status `json:"failure,omitempty"`
	Errors         []string    `json:"errors,omitempty"`
	RepairAttempts int         `json:"repair_attempts"`
	Replays        int         `json:"replays,omitempty"` // operator replays so far; a new replay numbers past it
	ToolRevision   uint64      `json:"tool_revision,omitempty"`
	ArgumentsHash  string      `json:"arguments_hash"`
	IdempotencyKey string      `json:"idempotency_key,omitempty"`
	// Identity: verified (tenant, principal and roles from a token the
	// deployment's issuer signed) or unverified (taken from headers).
	Identity string      `json:"identity"`
	History  []call.Step `json:"history"`
	// Waiting is what the call waits for now (wait.go); nil: it is moving,
	// or done.
	Waiting *Wait `json:"waiting,omitempty"`
}

// Outputs turns one envelope a gate returned into what the worker publishes.
// A terminal envelope's result carries its audit event (redacted: the raw
// arguments stay in the dead-letter stream only), and with AuditStream the
// event goes to toolgate.audit.<status> as well. The
// emitter's Transition is told of it. A pass verdict of a gate that seals
// (seal.Passes) is sealed first with the emitter's Seals.
func (em *Emitter) Outputs(stage string, e call.Envelope) ([]worker.Output, error) {
	if err := em.seal(stage, &e); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	em.transition(stage, e)
	pub := em.public(e) // what records and audit events may show (names.go)
	id := func(kind string) string {
		return fmt.Sprintf("%s:%s:%s:%d:%d", e.CallID, stage, kind, e.RepairAttempts, e.Replays)
	}
	hdr := func() nats.Header {
		h := nats.Header{}
		h.Set(streams.HeaderCallID, e.CallID)
		h.Set(streams.HeaderResponseID, e.ResponseID)
		h.Set(streams.HeaderStatus, string(e.Status))
		h.Set(streams.HeaderTool, CutHeaderValue(em.toolName(e.ToolName)))
		h.Set(streams.HeaderProvider, CutHeaderValue(e.Provider))
		return h
	}
	var outs []worker.Output
	if WritesStatus(stage, e) && !ResultIsRecord(e, pub) {
		rec := em.statusOf(stage, e, pub)
		status := em.fitJSON(rec, e.CallID, e.ResponseID)
		// Its message id, like the hop's: a call made again from a
		// response stored twice (the same content under a new
		// Nats-Msg-Id, issue 39) finds its hop dropped as a duplicate, and
		// without one its record went back to this stage's and stayed there.
		outs = append(outs, worker.Output{Subject: streams.CallStatus(e.CallID), MsgID: id("status:" + string(e.Status)), Data: status})
		em.notifyWaiting(e, pub, rec.Waiting) // display only, before the record is stored: a redelivery tells again
	}
	outs = append(outs, batch.Marks(pub, CutText)...)
	if next := streams.Next(e.Status); next != "" {
		body, err := em.hopBody(&e)
		if err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
		return append(outs, worker.Output{Subject: em.hopSubject(next, e), MsgID: id("next"), Header: hdr(), Data: body}), nil
	}
	if !e.Status.Terminal() {
		return outs, nil // waiting, e.g. for a human decision
	}
	ev := em.fitAudit(AuditOf(stage, pub, em.sensitive(e.ToolName)))
	if em.auditStream() { // the separate audit stream too, for its subscribers (--audit-stream)
		audit := em.fitJSON(ev, e.CallID, e.ResponseID)
		outs = append(outs, worker.Output{Subject: streams.Audit(string(e.Status)), MsgID: id("audit"), Header: hdr(), Data: audit})
	}
	if !e.Status.OK() {
		fstage, failure := streams.FailedAt(e)
		h := hdr()
		h.Set(streams.HeaderStage, fstage)
		h.Set(streams.HeaderFailure, failure)
		body, err := e.Marshal() // dead letters stay JSON: operators read and replay them
		if err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
		outs = append(outs, worker.Output{Subject: streams.DLQ(fstage, failure), MsgID: id("dlq"), Header: h, Data: em.fitEnvelope(e, body)})
	}
	// The result last, once the record and the dead letter are stored: a
	// producer that has it (toolgate publish --wait) and asks an operator
	// finds them (toolgate status, dlq ls --call). It carries the audit
	// event (Result.Audit): one stored message ends the call (issue 30).
	res := em.resultJSON(e, &ev)
	return append(outs, worker.Output{Subject: em.resultsSubject(e), MsgID: id("result"), Header: hdr(), Data: res, After: true}), nil
}

// WritesStatus says whether this output writes the call's status record:
// where a call waits (approval_required; a repair re-entering it; the
// stages' retry waits, waits.go) and when it ends (terminal), plus every
// hop of a call the operator replayed. Not when it enters: a call in
// flight is answered from the hop it waits in (internal/inflight). Outputs
// skips the final record of a call that wrote none before
// (ResultIsRecord): its result is its record, so a valid call stores no
// record at all (issue 30). Between those points each transition travels in the
// envelope's history and lands in the record with the next write, so the
// record still holds every transition.
//
// A call that leaves a wait (a human decided on it) is written too, so its
// record stops saying it waits.
func WritesStatus(stage string, e call.Envelope) bool {
	return stage == streams.Repair || streams.Next(e.Status) == "" || e.Replays > 0 || leftWait(e)
}

// ResultIsRecord reports whether the result of e stands for its final
// status record, so no record is written (issue 30, "one write for the end
// of a call"): e ended, no earlier hop of it wrote a record (RecordedBefore),
// it did not end in outcome_unknown (reconciling it starts from its record),
// and its record would show its tool name as the result does (a registered
// tool: an unregistered name is hashed in records, never in results). A
// reader finds such a call's record in its result (internal/records).
func ResultIsRecord(e, pub call.Envelope) bool {
	return e.Status.Terminal() && e.Status != call.OutcomeUnknown && pub.ToolName == e.ToolName && !RecordedBefore(e)
}

// RecordedBefore reports whether an earlier hop of e wrote its status
// record, as its envelope tells: an operator replay (the replay writes one,
// and so does every hop of a replayed call), a repair round (the repair
// gate writes one), or a step before the last one at the repair gate, in a
// wait for a human (approval_required: WritesStatus of a status no stage
// handles), or a stage's retry wait (a wait step, waits.go: the record says
// what the call waited for). Without such a record a final one is needed
// only to say the call no longer waits, and there is none to correct.
func RecordedBefore(e call.Envelope) bool {
	if e.Replays > 0 || e.RepairAttempts > 0 {
		return true
	}
	for _, s := range e.History[:max(len(e.History)-1, 0)] {
		if s.Stage == streams.Repair || (!s.Status.Terminal() && streams.Next(s.Status) == "") || strings.HasPrefix(s.Note, WaitNotePrefix) {
			return true
		}
	}
	return false
}

// leftWait reports whether e's last transition took it out of
// approval_required.
func leftWait(e call.Envelope) bool {
	n := len(e.History)
	return n >= 2 && e.History[n-2].Status == call.ApprovalRequired && e.Status != call.ApprovalRequired
}

// statusOf is the status record of e (pub: as records show it); a call
// left waiting at stage says what for (Emitter.Waits).
func (em *Emitter) statusOf(stage string, e, pub call.Envelope) StatusRecord {
	rec := StatusOf(pub)
	if em != nil && em.Waits != nil && !e.Status.Terminal() && streams.Next(e.Status) == "" {
		rec.Waiting = em.Waits(stage, e)
	}
	return rec
}

// ResultOf builds the result message of a terminal envelope, without its
// audit event (Outputs adds it: Result.Audit), fitted to what NATS can
// store: errors cut to TextMax each, and a tool result over result.Limit of
// the max payload (the executors' read limit too), or one whose three
// copies in result, text and message would not fit, carried once, cut to
// an excerpt with its size and sha256, which the text and the message name
// instead of repeating.
func (em *Emitter) ResultOf(e call.Envelope) Result {
	r, _ := em.result(e, nil)
	return r
}

// resultJSON is the encoded result of e carrying the audit event ev (nil:
// none), encoded once when it fits. What does not fit loses, in this
// order, the audit's large parts (cutAudit), half the tool result, the
// audit's errors and arguments but their sizes and sha256 (shortAudit); as
// a last resort the result is its cut form, the short audit beside it: the
// audit is never dropped.
func (em *Emitter) resultJSON(e call.Envelope, ev *AuditEvent) []byte {
	r, data := em.result(e, ev)
	if data != nil {
		return data
	}
	// r did not fit (result tried it last); its encoding is what the cut
	// form names by size and sha256.
	data, err := wirejson.Marshal(r)
	if ev != nil {
		r.Audit = shortAudit(*ev)
		if short, err := wirejson.Marshal(r); err == nil && len(short) <= em.bodyBudget() {
			return short
		}
	}
	return em.cutFormAudit(data, err, e.CallID, e.ResponseID, r.Audit)
}

// result is the result of e carrying ev and, when it fits, its encoding.
func (em *Emitter) result(e call.Envelope, ev *AuditEvent) (Result, []byte) {
	budget := em.bodyBudget()
	o := result.Outcome{
		Provider: e.Provider, CallID: e.CallID, ProviderCallID: e.ProviderCallID, Tool: e.ToolName, Kind: e.ProviderKind,
		Status: string(e.Status), OK: e.Status.OK(), Errors: FitErrors(e.Errors), ValidTools: e.ValidTools,
		Result: result.Cut(e.Result, result.Limit(em.maxPayload()), ExcerptMax),
	}
	if e.Status == call.Failed && e.Failure != "" {
		o.Status = string(e.Failure) // the model needs the class, not "failed"
	}
	r := resultOf(e, o)
	r.Audit = ev
	fits := func() []byte {
		data, err := wirejson.Marshal(r)
		if err == nil && len(data) <= budget {
			return data
		}
		return nil
	}
	if data := fits(); data != nil {
		return r, data
	}
	if ev != nil { // the audit's large parts first: the result is the producer's
		r.Audit = cutAudit(*ev)
		if data := fits(); data != nil {
			return r, data
		}
	}
	if _, cut := result.IsCut(o.Result); !cut && len(o.Result) > 0 {
		o.Result = result.Cut(e.Result, len(e.Result)/2, ExcerptMax)
		audit := r.Audit
		r = resultOf(e, o)
		r.Audit = audit
		if data := fits(); data != nil {
			return r, data
		}
	}
	return r, nil
}

func resultOf(e call.Envelope, o result.Outcome) Result {
	msg, err := result.Message(o)
	if err != nil {
		msg, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return Result{
		CallID: e.CallID, ResponseID: e.ResponseID, ProviderCallID: e.ProviderCallID, Provider: e.Provider,
		Tool: e.ToolName, Status: e.Status, Failure: e.Failure, OK: o.OK, Errors: o.Errors, Result: o.Result,
		RepairAttempts: e.RepairAttempts, Source: e.Source, Text: result.Text(o), Message: msg, History: e.History,
		ResponseCalls: e.Batch.Size, Model: e.Model, Replays: e.Replays, ToolRevision: e.ToolRevision,
		ArgumentsHash: redact.Hash([]byte(e.RawArguments)), IdempotencyKey: e.IdempotencyKey, Identity: IdentityOf(e),
	}
}

// StatusOf builds the status record of an envelope, its errors bounded by
// FitErrors.
func StatusOf(e call.Envelope) StatusRecord {
	return StatusRecord{
		CallID: e.CallID, ResponseID: e.ResponseID, Tool: e.ToolName, Provider: e.Provider, Model: e.Model,
		Source: e.Source, Status: e.Status, Failure: e.Failure, Errors: FitErrors(e.Errors), RepairAttempts: e.RepairAttempts,
		Replays: e.Replays, ToolRevision: e.ToolRevision, ArgumentsHash: redact.Hash([]byte(e.RawArguments)),
		IdempotencyKey: e.IdempotencyKey, Identity: IdentityOf(e), History: e.History,
	}
}

// IdentityOf is how the call's identity was established; a call that does
// not say is unverified.
func IdentityOf(e call.Envelope) string {
	if e.Request.Identity == call.IdentityVerified || e.Request.Identity == call.IdentityAsserted {
		return e.Request.Identity
	}
	return call.IdentityUnverified
}
