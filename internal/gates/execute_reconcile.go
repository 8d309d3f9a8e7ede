package gates

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

// reconcile decides a call whose claim's lease ran out without an answer.
// An executor that can say whether the call happened (execute.StatusQuerier)
// is asked first: a known answer completes the record on behalf of the
// claim's owner and ends the call executed or execution_failed, without
// running it again. Anything else ends outcome_unknown. A malformed record
// (idem.Record.Malformed) comes here too: it may stand for a run.
// The query names the replay partition the claim's request named (the
// record's, whatever P is now); part, the call's partition under today's
// P, only when the record cannot be read.
func (x *Execute) reconcile(ctx context.Context, e call.Envelope, t *tool.Compiled, existing idem.Record, retention time.Duration, part int) ([]call.Envelope, error) {
	why := fmt.Sprintf("a previous attempt (%s) claimed this call at %s and never recorded an answer: it may or may not have run; reconcile with the tool using idempotency key %s before replaying",
		existing.Owner, existing.ClaimedAt.Format(time.RFC3339), existing.Key)
	if existing.Malformed != "" {
		// Nothing in it is trusted: not a claim, not an answer.
		why = fmt.Sprintf("the idempotency record of this call cannot be read (%s): whether it ran is unknown, so it was not run; reconcile with the tool using idempotency key %s before replaying",
			existing.Malformed, existing.Key)
	}
	q, ok := x.Executors(t).(execute.StatusQuerier)
	if !ok {
		return x.end(e, call.OutcomeUnknown, why)
	}
	if existing.Malformed == "" {
		part = existing.ReplayPartition
	}
	qctx, cancel := context.WithTimeout(ctx, t.Timeout)
	st, err := q.Status(qctx, execute.Request{Tool: e.ToolName, CallID: e.CallID, IdempotencyKey: existing.Key, Arguments: e.Arguments, ReplayPartition: part})
	cancel()
	switch {
	case err != nil:
		return x.end(e, call.OutcomeUnknown, why, "the executor could not say whether it ran: "+err.Error())
	case !st.Known:
		return x.end(e, call.OutcomeUnknown, why, "the executor has no record of this idempotency key (it may not have run, or may have forgotten)")
	}
	reply := st.Reply()
	if cerr := x.Store.Complete(ctx, existing.Key, existing.Owner, reply.OK, reply.Result, reply.Error, retention); cerr != nil {
		if !errors.Is(cerr, idem.ErrNotOwner) {
			e.Note("the executor's answer could not be recorded (" + cerr.Error() + ")")
		} else if rec, found, gerr := x.Store.Get(ctx, existing.Key); gerr == nil && found && rec.State == idem.Completed {
			// Completed meanwhile (the owner came back): its answer wins.
			reply = execute.Reply{OK: rec.OK, Result: rec.Result, Error: rec.Error}
		}
	}
	e.Result = reply.Result
	note := "reconciled: the executor reports this call already ran (idempotency key " + existing.Key + "); its answer is recorded and the tool was not run again"
	if !reply.OK {
		if err := e.Move(streams.Execute, call.ExecutionFailed, x.Now(), reply.Error); err != nil {
			return nil, err
		}
		e.Note(note)
		return []call.Envelope{e}, nil
	}
	if err := e.Move(streams.Execute, call.Executed, x.Now()); err != nil {
		return nil, err
	}
	e.Note(note)
	return []call.Envelope{e}, nil
}

// askOnce asks an executor that can answer whether the call with req's
// idempotency key happened. ok is false when it cannot say.
func (x *Execute) askOnce(ctx context.Context, t *tool.Compiled, req execute.Request) (reply execute.Reply, ok bool) {
	q, can := x.Executors(t).(execute.StatusQuerier)
	if !can {
		return execute.Reply{}, false
	}
	qctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	st, err := q.Status(qctx, req)
	if err != nil || !st.Known {
		return execute.Reply{}, false
	}
	return st.Reply(), true
}
