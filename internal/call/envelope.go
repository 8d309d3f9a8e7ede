// Package call holds the call envelope that travels through the gates, its
// statuses and the legal moves between them.
package call

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Source says how a call was found.
const (
	SourceNative   = "native"   // the provider's own tool-call structure
	SourceTextJSON = "textjson" // recovered from the assistant's text
)

// ErrIllegalTransition is returned by Move for a move the state machine does
// not allow. It is a bug in a gate, never a property of the input, so the
// worker dead-letters the call loudly instead of guessing.
var ErrIllegalTransition = errors.New("call: illegal status transition")

// Batch places a call among the calls of its response.
type Batch struct {
	ID     string `json:"id"`     // the response id
	Index  int    `json:"index"`  // this call's position, 0-based
	Size   int    `json:"size"`   // how many calls the response proposed
	Atomic bool   `json:"atomic"` // none runs unless all passed every gate
}

// Request is the context the producer sent with the response.
type Request struct {
	Tenant       string   `json:"tenant,omitempty"`
	Principal    string   `json:"principal,omitempty"`
	Roles        []string `json:"roles,omitempty"`
	Conversation string   `json:"conversation,omitempty"`
	Tolerant     bool     `json:"tolerant,omitempty"`
	DryRun       bool     `json:"dry_run,omitempty"`
	// Identity says where Tenant, Principal and Roles came from:
	// IdentityVerified (a token the deployment's issuer signed) or
	// IdentityUnverified (headers taken on trust, dev mode).
	Identity string `json:"identity,omitempty"`
	// Priority is the producer's Toolgate-Priority (wire.PriorityInteractive
	// or wire.PriorityBatch); "": its tenant's default. It picks the call's
	// fairness lane at every hop (streams.LaneOf), so a call resumed from
	// an approval or a replay keeps it.
	Priority string `json:"priority,omitempty"`
}

// Identity values of Request.Identity.
const (
	IdentityVerified   = "verified"
	IdentityUnverified = "unverified"
	// IdentityAsserted: tenant, principal and roles from the headers of a
	// NATS user the deployment allows to assert them
	// (--identity-assert-users), on its own subject (wire.InAsResponse).
	IdentityAsserted = "asserted"
)

// Step is one entry of a call's history (wire.Step, as results carry it).
type Step = wire.Step

// Repair is the evidence of one repair attempt. Its JSON keeps RawArguments
// exact the way Envelope's does (raw_arguments_b64).
type Repair struct {
	Attempt      int       `json:"attempt"`
	Failure      Status    `json:"failure"`
	RawArguments string    `json:"raw_arguments"`
	Errors       []string  `json:"errors,omitempty"`
	Answer       string    `json:"answer,omitempty"`
	At           time.Time `json:"at"`
}

// Envelope is one proposed tool call and everything the gates learned about
// it. It carries the seed's ToolCallRecord fields plus provenance, batch,
// request context and history. It is the message body between gates.
//
// Its JSON keeps RawArguments and Text byte for byte: a value that is not
// valid UTF-8 (encoding/json would write U+FFFD) is also written as base64
// in raw_arguments_b64 / text_b64, which decoding prefers, so the parse gate
// and every dead letter see the bytes the provider sent.
type Envelope struct {
	CallID         string `json:"call_id"`
	ResponseID     string `json:"response_id"`
	ProviderCallID string `json:"provider_call_id,omitempty"`
	// ProviderKind is the provider's item type of a call that is not a
	// plain function call (OpenAI Responses local_shell_call, custom_tool_call,
	// ...): its result goes back as that kind's own output item.
	ProviderKind   string          `json:"provider_kind,omitempty"`
	Provider       string          `json:"provider"`
	Model          string          `json:"model,omitempty"`
	Source         string          `json:"source"`
	ToolName       string          `json:"tool_name"`
	RawArguments   string          `json:"raw_arguments"`
	FinishReason   string          `json:"finish_reason,omitempty"`
	ProviderFinish string          `json:"provider_finish_reason,omitempty"`
	Status         Status          `json:"status"`
	Failure        Status          `json:"failure,omitempty"` // for Failed: the class that could not be repaired
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	Errors         []string        `json:"errors,omitempty"`
	RepairAttempts int             `json:"repair_attempts"`
	Replays        int             `json:"replays,omitempty"` // operator replays; part of output message ids
	Repairs        []Repair        `json:"repairs,omitempty"`
	ToolRevision   uint64          `json:"tool_revision,omitempty"`
	ValidTools     []string        `json:"valid_tools,omitempty"`
	TruncatedHint  string          `json:"truncated_hint,omitempty"` // why accumulate suspects the arguments were cut
	Review         []string        `json:"review,omitempty"`         // business rules that route the call to a human
	Carrier        bool            `json:"carrier,omitempty"`        // not a call: assistant text to recover calls from
	Text           string          `json:"text,omitempty"`           // the assistant's own text, on a carrier
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Batch          Batch           `json:"batch"`
	Request        Request         `json:"request"`
	CreatedAt      time.Time       `json:"created_at"`
	History        []Step          `json:"history"`
	// Approval is the human decision policy passed the call on, when one
	// was needed; the policy seal covers it.
	Approval *Decision `json:"approval,omitempty"`
	// Seals are the gates' signed statements that they passed this call,
	// oldest first (internal/seal makes and checks them).
	Seals []Seal `json:"seals,omitempty"`
	// ArgsCanonical says Arguments are the canonical form (internal/canon)
	// this process's parse gate made of them, so parse's seal hashes them
	// as they are instead of canonicalising them again. It is never
	// encoded: a decoded envelope, whoever wrote it, does not have it.
	ArgsCanonical bool `json:"-"`
}

// New starts an envelope in Received, with its first history step.
func New(responseID string, index int, now time.Time) Envelope {
	e := Envelope{
		CallID:     ID(responseID, index),
		ResponseID: responseID,
		Source:     SourceNative,
		Status:     Received,
		Batch:      Batch{ID: responseID, Index: index},
		CreatedAt:  now.UTC(),
	}
	e.History = []Step{{Stage: "accumulate", Status: Received, At: e.CreatedAt}}
	return e
}

// Move changes the status if the move is legal and records it in the
// history. errs replace the envelope's errors (nil clears them).
func (e *Envelope) Move(stage string, to Status, now time.Time, errs ...string) error {
	if !Legal(e.Status, to) {
		return fmt.Errorf("%w: %s -> %s at %s (call %s)", ErrIllegalTransition, e.Status, to, stage, e.CallID)
	}
	e.Status = to
	e.Errors = errs
	e.History = append(e.History, Step{Stage: stage, Status: to, At: now.UTC()})
	return nil
}

// Note adds a remark to the last history step.
func (e *Envelope) Note(note string) {
	if n := len(e.History); n > 0 {
		if e.History[n-1].Note != "" {
			note = e.History[n-1].Note + "; " + note
		}
		e.History[n-1].Note = note
	}
}

// Reset puts the envelope back in status to for a replay, bypassing the state
// machine on purpose: an operator replays a dead letter after a fix. The
// history keeps everything and records the replay.
func (e *Envelope) Reset(stage string, to Status, now time.Time, note string) {
	e.Status = to
	e.Failure = ""
	e.Errors = nil
	e.History = append(e.History, Step{Stage: stage, Status: to, At: now.UTC(), Note: note})
}

// Abort ends the call as Failed with failure code, bypassing the state
// machine on purpose: the stage could not process it at all (a panic, an
// exhausted redelivery budget, an illegal transition). The dead letter keeps
// the evidence for a replay.
//
// A call that was already failing in a repairable class (the repair gate
// gave up because the model was unreachable) keeps that class as its
// failure, and its errors, so the result still tells the model what was
// wrong with the call and a replay starts where the class was found.
func (e *Envelope) Abort(stage, code string, err error, now time.Time) {
	if e.Status.Repairable() {
		e.Failure = e.Status
		e.Errors = append(e.Errors, fmt.Sprintf("%s could not finish (%s): %v", stage, code, err))
	} else {
		e.Failure = Status(code)
		e.Errors = []string{err.Error()}
	}
	e.Status = Failed
	e.History = append(e.History, Step{Stage: stage, Status: Failed, At: now.UTC(), Note: code})
}

// Attempt is the number that makes this envelope's outputs unique per
// repair round, used in message ids.
func (e *Envelope) Attempt() int { return e.RepairAttempts }

// Marshal encodes the envelope.
func (e *Envelope) Marshal() ([]byte, error) { return e.encode() }

// envelopeFields and repairFields have the fields and none of the methods.
type (
	envelopeFields Envelope
	repairFields   Repair
)

type envelopeJSON struct {
	*envelopeFields
	RawArgumentsB64 string `json:"raw_arguments_b64,omitempty"`
	TextB64         string `json:"text_b64,omitempty"`
}

type repairJSON struct {
	*repairFields
	RawArgumentsB64 string `json:"raw_arguments_b64,omitempty"`
}

// MarshalJSON implements json.Marshaler; see Envelope.
func (e Envelope) MarshalJSON() ([]byte, error) { return e.encode() }

// UnmarshalJSON implements json.Unmarshaler; see Envelope.
func (e *Envelope) UnmarshalJSON(data []byte) error { return e.decode(data) }

// MarshalJSON implements json.Marshaler; see Repair.
func (r Repair) MarshalJSON() ([]byte, error) {
	f := repairFields(r)
	return json.Marshal(repairJSON{&f, exactB64(r.RawArguments)})
}

// UnmarshalJSON implements json.Unmarshaler; see Repair.
func (r *Repair) UnmarshalJSON(data []byte) error {
	w := repairJSON{repairFields: (*repairFields)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	return fromB64(&r.RawArguments, w.RawArgumentsB64, "raw_arguments_b64")
}

// exactB64 is s in base64 when JSON cannot carry it as it is, else "".
func exactB64(s string) string {
	if utf8.ValidString(s) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(s))
}

func fromB64(dst *string, b64, field string) error {
	if b64 == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return fmt.Errorf("call: %s is not base64 (the exact bytes of a value that is not UTF-8): %w", field, err)
	}
	*dst = string(b)
	return nil
}

// Unmarshal decodes an envelope and checks the fields every gate relies on.
func Unmarshal(data []byte) (Envelope, error) {
	var e Envelope
	if err := e.decode(data); err != nil {
		return e, fmt.Errorf("call: decode envelope: %w", err)
	}
	if e.CallID == "" || e.ResponseID == "" || e.Status == "" {
		return e, errors.New("call: envelope lacks call_id, response_id or status")
	}
	return e, nil
}
