package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// Stream defaults.
const (
	DefaultIdleTimeout = 60 * time.Second
	DefaultGapRecheck  = time.Second
	// DefaultOptionalGrace: how long a stream that has all its response
	// needs waits for an optional last event (Bedrock's metadata after
	// messageStop) before it settles without it.
	DefaultOptionalGrace = 2 * time.Second
)

// handleEvent handles one event of toolgate.in.stream.<response-id>. The
// event stays stored in TOOLGATE_IN; handling it only publishes progress,
// makes sure the stream has an idle timer, and — when the event is the
// provider's terminal event or a Toolgate-End — assembles the response from
// everything the stream holds (see "Streamed responses" in the README). It returns with the outputs
// of that assembly, and the worker acks the event once they are stored.
func (a *Accumulate) handleEvent(ctx context.Context, m worker.Msg, ref streamRef) ([]worker.Output, error) {
	if a.JS == nil {
		return nil, worker.Permanent("no_jetstream", errors.New("accumulate: streamed input needs JetStream (Accumulate.JS is nil)"))
	}
	rid := ref.rid
	if !call.ValidResponseID(rid) {
		safe := call.SafeResponseID(rid)
		return a.reject(m, safe, m.Header.Get(streams.HeaderProvider), a.tenantOf(ref, m.Header), "bad_response_id",
			fmt.Sprintf("stream subject token %q is not a response id: use letters, digits, '-' and '_' (at most 128)", rid))
	}
	_, at, _ := streamPlace(m.Subject)
	why, err := a.inMisplaced(ctx, m.Subject, at, func(p int) streams.Place { return streams.PlaceFor(ref.tok, rid, p) })
	if err != nil {
		return nil, err
	}
	if why != "" { // stored where the server's mapping does not put its stream (in_partitions.go): never read into it
		return a.misplacedInput(m, rid, why)
	}
	ev := eventOf(m.Header, m.Data, m.StreamSeq, a.Now())
	switch refusal(ev, a.maxEvents()) {
	// Refused on its own: the stream settles as it would without it, so it
	// still needs its idle timer.
	case CodeSeqOutOfRange:
		why := fmt.Errorf("header %s is %q: use a number from 1 to %d (the limit of events in one response, TOOLGATE_STREAM_MAX_EVENTS); the event was left out of the response",
			streams.HeaderSeq, shortValue(m.Header.Get(streams.HeaderSeq), 64), a.maxEvents())
		return []worker.Output{a.raw(CodeSeqOutOfRange, m, why), a.timer(ref, "timer")}, nil
	case CodeHeaderTooLarge:
		why := fmt.Errorf("header %s is %d bytes, over the %d-byte limit of a toolgate header: send it shorter; the event was left out of the response",
			shortValue(ev.bigHeader, 64), len(m.Header.Get(ev.bigHeader)), pipeline.InputHeaderMax)
		return []worker.Output{a.raw(CodeHeaderTooLarge, m, why), a.timer(ref, "timer")}, nil
	}
	prov := m.Header.Get(streams.HeaderProvider)
	terminal := ev.end || !provider.Known(prov) || a.progress(ref, prov, ev)
	if !terminal {
		return []worker.Output{a.timer(ref, "timer")}, nil
	}
	if done, err := a.finished(ctx, ref); err != nil || done {
		if done {
			a.forget(ref)
		}
		return nil, err // done: a duplicate or late terminal event, already settled
	}
	outs, wait, err := a.settle(ctx, ref, false)
	if err != nil || wait == 0 {
		return outs, err
	}
	// Terminal event seen but an earlier event is missing: a second timer
	// rechecks soon, for the reordered event that is probably on its way.
	return []worker.Output{a.timer(ref, "timer"), a.timer(ref, "gap")}, nil
}

// HandleTimer implements worker.Handler for the accumulate_timer consumer
// (streams.TimerSubject). A timer is acked once its stream is finished;
// while the stream is open it asks to be redelivered (worker.Retry) when the
// idle timeout would expire, or after GapRecheck when the terminal event
// arrived before an earlier event. An idle stream that never finished is
// recorded as transport_incomplete.
func (a *Accumulate) HandleTimer(ctx context.Context, m worker.Msg) ([]worker.Output, error) {
	ref := streamRef{tok: m.Header.Get(streams.HeaderTenant), rid: m.Header.Get(streams.HeaderResponseID)}
	if !call.ValidResponseID(ref.rid) || ref.tok != "" && !validTenantToken(ref.tok) {
		return nil, worker.Permanent("bad_timer", fmt.Errorf("accumulate: timer without a valid %s header, or with a %s header that is no tenant token", streams.HeaderResponseID, streams.HeaderTenant))
	}
	if done, err := a.finished(ctx, ref); err != nil || done {
		if done {
			a.forget(ref)
		}
		return nil, err
	}
	outs, wait, err := a.settle(ctx, ref, true)
	if err != nil || wait == 0 {
		return outs, err
	}
	return nil, worker.Retry(wait)
}

// settle assembles ref's stream from what TOOLGATE_IN holds. A finished
// stream yields its outputs plus the responses-bucket mark and wait 0; an
// open one yields how long its timer should wait before looking again. Only
// when timed is set does the idle timeout apply. The assembly so far is
// kept between calls, so only events stored since the last call are read.
func (a *Accumulate) settle(ctx context.Context, ref streamRef, timed bool) (outs []worker.Output, wait time.Duration, err error) {
	e := a.asm.entry(ref.key(), a.maxEvents(), max(assemblyBudget, a.maxBody()), a.streamSender(ref))
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.settled {
		return nil, 0, nil // settled by the caller that held e before: its outputs are on their way
	}
	_, err = a.readInto(ctx, ref, e.asm)
	a.asm.resize(ref.key(), e)
	outs, wait, err = a.judge(ctx, ref, e.asm, timed, err)
	if err == nil && wait == 0 {
		e.settled = true
		a.forget(ref) // settled (or aged out): nothing more to follow here
	}
	return outs, wait, err
}

// streamSender is who sent an event of ref's stream: its subject decides
// what its headers may claim (senderOn).
func (a *Accumulate) streamSender(ref streamRef) func(nats.Header, time.Time) sender {
	subject := ref.subject()
	return func(h nats.Header, at time.Time) sender { return a.senderOn(subject, h, at) }
}

// judge decides on rid's stream from its assembly and the error of the read
// that brought it up to date.
func (a *Accumulate) judge(ctx context.Context, ref streamRef, asm *assembly, timed bool, readErr error) (outs []worker.Output, wait time.Duration, err error) {
	rid := ref.rid
	var tooLarge errTooLarge
	var tooMany errTooMany
	switch {
	case errors.As(readErr, &tooLarge):
		outs, err = a.reject(asm.evidenceMsg(ref, tooLarge.streamSeq), rid, asm.provider, asm.tenant(), CodeStreamTooBig, tooLarge.Error())
		return a.finish(ref, call.Rejected, outs, err)
	case errors.As(readErr, &tooMany):
		outs, err = a.reject(asm.evidenceMsg(ref, tooMany.streamSeq), rid, asm.provider, asm.tenant(), CodeTooManyEvents, tooMany.Error())
		return a.finish(ref, call.Rejected, outs, err)
	case readErr != nil:
		return nil, 0, readErr
	case asm.stored == 0:
		return nil, 0, nil // aged out of TOOLGATE_IN: nothing left to decide on
	case asm.conflict != "":
		// Nothing the stream could still bring makes it one producer's.
		outs, err = a.conflict(asm.msg(ref), rid, asm.provider, asm.tenant(), call.StreamConflict, CodeStreamConflict, "stream",
			asm.conflict+": nothing of this response runs")
		return a.finish(ref, call.StreamConflict, outs, err)
	case asm.invalid != "":
		outs, err = a.refuseIdentity(asm.msg(ref), rid, asm.provider, asm.invalidErr)
		return a.finish(ref, call.Rejected, outs, err)
	}
	idle := a.idle()
	quiet := a.Now().Sub(asm.lastAt)
	switch {
	case len(asm.bySeq) == 0 && asm.ended, asm.accepted() == 0 && timed && quiet >= idle:
		outs, err = a.incomplete(asm.msg(ref), rid, asm, asm.why(idle))
		return a.finish(ref, call.TransportIncomplete, outs, err)
	case asm.accepted() == 0:
		// Only refused events so far: the stream may still begin.
	case !provider.Known(asm.provider):
		outs, err = a.reject(asm.msg(ref), rid, asm.provider, asm.tenant(), "unknown_provider", fmt.Sprintf("header %s is %q; use one of %s", streams.HeaderProvider, asm.provider, strings.Join(provider.Names(), ", ")))
		return a.finish(ref, call.Rejected, outs, err)
	case asm.undecodable != "":
		outs, err = a.reject(asm.msg(ref), rid, asm.provider, asm.tenant(), CodeUndecodableEvent, asm.undecodable)
		return a.finish(ref, call.Rejected, outs, err)
	case !asm.done && asm.awaitsOptional() && asm.owner != nil && (asm.ended || quiet >= a.optionalGrace()):
		// All the response needs arrived; the optional last event did
		// not, within the grace or before the producer's end.
		asm.settleOptional()
		outs, err = a.emit(ctx, asm.msg(ref), rid, asm.resp, *asm.owner, claimStream(*asm.owner))
		return a.finish(ref, call.Received, outs, err)
	case asm.done && asm.owner != nil: // every accepted event has a sender (stream_bind.go)
		outs, err = a.emit(ctx, asm.msg(ref), rid, asm.resp, *asm.owner, claimStream(*asm.owner))
		return a.finish(ref, call.Received, outs, err)
	case asm.ended || (timed && quiet >= idle):
		outs, err = a.incomplete(asm.msg(ref), rid, asm, asm.why(idle))
		return a.finish(ref, call.TransportIncomplete, outs, err)
	}
	// Open. A terminal event or a later event already arrived past a missing
	// one: the missing event is probably in flight, look again soon.
	wait = idle - quiet
	if asm.gap() {
		wait = min(wait, a.gapRecheck())
	}
	if asm.awaitsOptional() {
		wait = min(wait, a.optionalGrace()-quiet)
	}
	return nil, max(wait, time.Millisecond), nil
}

// finish appends the responses-bucket mark to a settled stream's outputs:
// duplicates, timers and replicas that come later leave the stream be.
func (a *Accumulate) finish(ref streamRef, st call.Status, outs []worker.Output, err error) ([]worker.Output, time.Duration, error) {
	if err != nil {
		return nil, 0, err
	}
	data, _ := json.Marshal(struct {
		ResponseID string      `json:"response_id"`
		Status     call.Status `json:"status"`
		At         time.Time   `json:"at"`
	}{ref.rid, st, a.Now().UTC()})
	return append(outs, worker.Output{Subject: streams.ResponseDone(ref.key()), MsgID: ref.key() + ":done", Data: data}), 0, nil
}

// incomplete records an unfinished stream: every call that started becomes
// transport_incomplete with the raw arguments that did arrive, never to be
// parsed or executed. When no call started the response as a whole gets a
// transport_incomplete result, and the transcript goes to the dead letters.
func (a *Accumulate) incomplete(m worker.Msg, rid string, asm *assembly, why string) ([]worker.Output, error) {
	resp := asm.evidence()
	if len(resp.Calls) == 0 {
		outs, err := a.responseOutcome(rid, asm.tenant(), asm.provider, call.TransportIncomplete, why)
		if err != nil {
			return nil, err
		}
		return append(outs, a.raw(string(call.TransportIncomplete), m, errors.New(why))), nil
	}
	if resp.Provider == "" {
		resp.Provider = asm.provider
	}
	var outs []worker.Output
	for _, c := range resp.Calls {
		e := a.envelope(m.Header, rid, resp, c, asm.request())
		keyed(&e, call.Key(asm.tenant(), rid)) // a tenant's calls never share an id with another's
		if err := e.Move(streams.Accumulate, call.TransportIncomplete, a.Now(), why); err != nil {
			return nil, worker.Permanent("illegal_transition", err)
		}
		e.Note(fmt.Sprintf("%d argument bytes arrived before the stream stopped", len(c.Arguments)))
		o, err := a.Emit.Outputs(streams.Accumulate, e)
		if err != nil {
			return nil, worker.Permanent("encode", err)
		}
		outs = append(outs, o...)
	}
	return outs, nil
}

// timer is the idle timer of ref's stream: its response id, and its
// subject's tenant token in the Toolgate-Tenant header (none for the
// shared subject). Its message id collapses the one every event asks for
// into one stored timer per kind.
func (a *Accumulate) timer(ref streamRef, kind string) worker.Output {
	h := nats.Header{}
	h.Set(streams.HeaderResponseID, ref.rid)
	if ref.tok != "" {
		h.Set(streams.HeaderTenant, ref.tok)
	}
	return worker.Output{Subject: streams.TimerSubject(), MsgID: ref.key() + ":" + kind, Header: h, Data: []byte(ref.rid)}
}

func (a *Accumulate) idle() time.Duration {
	if a.IdleTimeout <= 0 {
		return DefaultIdleTimeout
	}
	return a.IdleTimeout
}

func (a *Accumulate) optionalGrace() time.Duration {
	if a.OptionalGrace <= 0 {
		return DefaultOptionalGrace
	}
	return a.OptionalGrace
}

func (a *Accumulate) gapRecheck() time.Duration {
	if a.GapRecheck <= 0 {
		return DefaultGapRecheck
	}
	return a.GapRecheck
}

// tenantOf is the tenant of a message of ref's stream with headers h: the
// one its subject grants, "" when its identity is refused.
func (a *Accumulate) tenantOf(ref streamRef, h nats.Header) string {
	s := a.senderOn(ref.subject(), h, a.Now())
	if s.err != nil {
		return ""
	}
	return s.req.Tenant
}

// request is the request context of the stream's sender; a stream with no
// accepted event has none.
func (asm *assembly) request() call.Request {
	if asm.owner == nil {
		return call.Request{}
	}
	return asm.owner.req
}

// tenant is the tenant of the stream's sender, whose results hear of it.
func (asm *assembly) tenant() string { return asm.request().Tenant }
