package gates

import (
	"context"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/model"
	"github.com/toolgate/toolgate/internal/repair"
	"github.com/toolgate/toolgate/streams"
)

// Repair is the repair gate. It receives calls that failed as invalid_json,
// truncated, schema_invalid or no_such_tool.
//
// Without a model (Model nil: no repair endpoint configured) it calls
// nothing: the call ends Failed with Failure set to its class, and the result
// goes back as a tool-result error the caller can hand to its own model.
//
// With a model it asks for a corrected call, bounded by the tool's
// repair.max_attempts (repair.Decide). Every attempt is recorded in
// Envelope.Repairs: the class, the raw arguments and errors that were sent,
// and the model's answer (the repaired raw arguments, or its text). The
// answer means one of:
//   - repaired: the call re-enters the parse gate as the same call id with
//     RepairAttempts+1 and the answer's tool name and raw arguments, so every
//     gate judges it again, policy and approval included (the status record's
//     arguments hash and the Toolgate-Tool header change with them, and the
//     history names a changed tool);
//   - needs_clarification: the model said information is missing; terminal,
//     with its text as the error, never another attempt;
//   - failed: Failed with the class, the errors and the reason.
//
// A bound that is reached ends Failed with the class; the last answer is the
// envelope's RawArguments and Errors, the earlier ones are in Repairs. Model
// failures that may pass (429, 5xx, timeouts, network) are returned as
// worker.Transient errors, with the server's Retry-After as the delay, so the
// input is redelivered unchanged; a permanent refusal (another 4xx) ends
// Failed with the reason.
type Repair struct {
	Tools Tools
	Now   Clock
	// Model is the repair model (internal/model/modelclient); nil: no
	// endpoint configured.
	Model Model
	// Budget bounds one delivery's model requests, retries and waits
	// included; 0: only the client's own bounds. Keep it below the
	// consumer's AckWait so a slow model never makes JetStream hand the
	// same call to a second replica while it is being repaired.
	Budget time.Duration
}

// Handle implements pipeline.Gate.
func (r *Repair) Handle(ctx context.Context, e call.Envelope) ([]call.Envelope, error) {
	failure := e.Status
	if r.Model == nil {
		if err := e.Move(streams.Repair, call.Failed, r.Now(), e.Errors...); err != nil {
			return nil, err
		}
		e.Failure = failure
		e.Note("no repair endpoint configured: the failure is returned to the caller")
		return []call.Envelope{e}, nil
	}
	in := r.input(e)
	ok, why := repair.Decide(in)
	if !ok {
		if err := e.Move(streams.Repair, call.Failed, r.Now(), e.Errors...); err != nil {
			return nil, err
		}
		e.Failure = failure
		e.Note(why)
		return []call.Envelope{e}, nil
	}
	ans, err := r.ask(ctx, in)
	if err != nil {
		return nil, err
	}
	return r.apply(e, failure, why, ans)
}

// input is what the repair core needs to know about e. A call to a tool that
// does not exist is offered the closest valid tool (repair.Prompt's
// contract), also when it failed parsing before validation saw its name.
func (r *Repair) input(e call.Envelope) repair.Input {
	in := repair.Input{
		Failure: repair.Failure(e.Status), Tool: e.ToolName, RawArguments: e.RawArguments,
		Errors: e.Errors, ValidTools: e.ValidTools, Attempts: e.RepairAttempts,
	}
	t, ok := r.Tools.Lookup(e.ToolName)
	if !ok {
		if len(in.ValidTools) == 0 {
			in.ValidTools = r.Tools.Names()
		}
		if in.Failure != repair.NoSuchTool {
			in.Errors = append([]string{fmt.Sprintf("there is no tool named %q", e.ToolName)}, e.Errors...)
			in.Failure = repair.NoSuchTool
		}
		t, ok = r.Tools.Lookup(repair.Closest(e.ToolName, in.ValidTools))
	}
	if ok {
		in.Description, in.Schema, in.AllowText = t.Def.Description, t.Def.InputSchema, t.Def.Repair.AllowText
		// The definition's 0 disables repair; the core's 0 means its default.
		if in.MaxAttempts = t.Def.MaxRepairs(); in.MaxAttempts == 0 {
			in.MaxAttempts = -1
		}
	}
	return in
}

// apply records the attempt and moves e according to the model's answer.
func (r *Repair) apply(e call.Envelope, failure call.Status, why string, ans answer) ([]call.Envelope, error) {
	now := r.Now()
	e.RepairAttempts++
	rec := call.Repair{Attempt: e.RepairAttempts, Failure: failure, RawArguments: e.RawArguments, Errors: e.Errors, At: now.UTC()}
	if err := e.Move(streams.Repair, call.Repairing, now, e.Errors...); err != nil {
		return nil, err
	}
	e.Note(fmt.Sprintf("%s (%d model request(s))", why, ans.requests))
	v := ans.verdict
	switch v.Kind {
	case repair.KindRepaired:
		rec.Answer = v.Arguments
		e.Repairs = append(e.Repairs, rec)
		if err := e.Move(streams.Repair, call.Received, now); err != nil {
			return nil, err
		}
		note := fmt.Sprintf("repaired by model (attempt %d)", e.RepairAttempts)
		if v.Tool != e.ToolName {
			note += fmt.Sprintf(": tool changed from %q to %q; every gate judges it again, approval included", e.ToolName, v.Tool)
		}
		e.Note(note)
		e.ToolName, e.RawArguments = v.Tool, v.Arguments
		e.Arguments, e.ValidTools, e.ToolRevision, e.Review = nil, nil, 0, nil
		e.TruncatedHint = ans.truncatedWhy
		e.FinishReason, e.ProviderFinish = ans.finish, ans.providerFinish
	case repair.KindNeedsClarification:
		rec.Answer = v.Text
		e.Repairs = append(e.Repairs, rec)
		if err := e.Move(streams.Repair, call.NeedsClarification, now, v.Text); err != nil {
			return nil, err
		}
		e.Note("the repair model said information is missing; ask the user, do not repair again")
	default:
		rec.Answer = v.Text
		e.Repairs = append(e.Repairs, rec)
		if err := e.Move(streams.Repair, call.Failed, now, append(append([]string(nil), e.Errors...), v.Why)...); err != nil {
			return nil, err
		}
		e.Failure = failure
	}
	return []call.Envelope{e}, nil
}

// Model is what the repair gate needs of the repair model's client
// (modelclient.Client): the gate links no HTTP code of its own.
type Model interface {
	Config() model.Config
	Complete(ctx context.Context, req model.Request) (body []byte, requests int, err error)
}
