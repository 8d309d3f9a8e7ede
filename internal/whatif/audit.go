package whatif

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/streams"
)

// Reasons a call is not re-evaluated from its audit event (RunAudit).
const (
	SkipRedacted = "its arguments are redacted in the audit (sensitive or secret-like fields, or cut): they are not re-run"
	SkipNoAudit  = "no audit event (waiting for approval, or its event is gone)"
	SkipRoles    = "roles asserted by its producer (the audit does not record them)"
	SkipCut      = "the window holds more calls than the console re-evaluates"
)

// AuditSource is where the console's what-if reads the recorded calls: the
// status records (their fate) and the audit events (arguments as the gates
// saw them, redacted), both of which the console user may read — never
// TOOLGATE_IN, which holds what producers sent, tokens too. An audit event
// rides in its call's result (TOOLGATE_RESULTS, wire.Result.Audit, issue
// 30); events written before that, or with the stages' --audit-stream, are
// on TOOLGATE_AUDIT too, and each call counts once. A call whose audit
// arguments were redacted (their hash is not the recorded hash of the
// arguments) is counted as not re-evaluated, never run on redacted values,
// so what it re-runs is exactly what the gates saw.
type AuditSource struct {
	JS    jetstream.JetStream
	Since time.Time
	Tool  string
	// MaxCalls bounds the status records held (0: no bound); past it the
	// rest are counted as SkipCut.
	MaxCalls int
}

// RunAudit is Run over the audit events: the same gates, limits and
// report, for a reader that may not read the raw input.
func RunAudit(ctx context.Context, src AuditSource, ev *Evaluator) (*Report, error) {
	rep := NewReport()
	recs, err := Source{JS: src.JS, Since: src.Since, Tool: src.Tool, MaxCalls: src.MaxCalls}.records(ctx, rep)
	if err != nil {
		return nil, err
	}
	events := auditEvents{recs: recs, first: map[string]pipeline.AuditEvent{}}
	start := src.Since.Add(-slack)
	// The results' audit events, then the audit stream's (before the
	// upgrade, or --audit-stream): a call found in both counts once.
	refs, err := streams.ResultsStreams(ctx, src.JS) // every partition's (streams.ResultsStreams)
	if err != nil {
		return nil, fmt.Errorf("whatif: %w", err)
	}
	for _, ref := range refs {
		if err := readStream(ctx, src.JS, ref.Name, streams.ResultsAll(), start, events.result); err != nil {
			return nil, err
		}
	}
	if err := readStream(ctx, src.JS, streams.StreamAudit, streams.Audit(">"), start, events.event); err != nil {
		return nil, err
	}
	w := window{ev: ev, rep: rep, recs: recs, tool: src.Tool}
	for _, e := range events.ordered() {
		w.audit(ctx, e)
	}
	w.finish()
	for _, rec := range recs {
		if !rec.done {
			rep.Skip(rec.Tool, SkipNoAudit)
		}
	}
	return rep, nil
}

// readStream hands visit the body of every message on filter that stream
// holds from start on, up to its last message when the read began.
func readStream(ctx context.Context, js jetstream.JetStream, stream, filter string, start time.Time, visit func([]byte)) error {
	fail := func(err error) error { return fmt.Errorf("whatif: read %s: %w", stream, err) }
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return fail(err)
	}
	c, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter},
		DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &start})
	if err != nil {
		return fail(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return fail(err)
	}
	last := info.State.LastSeq
	for last > 0 {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		m, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			if errors.Is(err, jetstream.ErrNoMessages) && ctx.Err() == nil {
				return nil // nothing (more) at or after the window's start
			}
			return fail(err)
		}
		md, err := m.Metadata()
		if err != nil {
			return fail(err)
		}
		visit(m.Data())
		if md.Sequence.Stream >= last {
			return nil
		}
	}
	return nil
}

// auditEvents holds the first audit event of each call of the window
// (recs), wherever it was read: the one of the fewest replays, the
// earliest of those (a replay's later events carry the same arguments, or
// repaired ones), so a call whose event is both in its result and on the
// audit stream counts once.
type auditEvents struct {
	recs  map[string]*Recorded
	first map[string]pipeline.AuditEvent
	order []string
}

// result takes the audit event a result carries (none: a result of before
// issue 30, whose event is on the audit stream).
func (a *auditEvents) result(data []byte) {
	var r struct {
		CallID string               `json:"call_id"`
		Audit  *pipeline.AuditEvent `json:"audit"`
	}
	if json.Unmarshal(data, &r) != nil || r.Audit == nil || r.Audit.CallID != r.CallID {
		return
	}
	a.add(*r.Audit)
}

// event takes an event of the audit stream.
func (a *auditEvents) event(data []byte) {
	var ev pipeline.AuditEvent
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	a.add(ev)
}

func (a *auditEvents) add(ev pipeline.AuditEvent) {
	if _, ok := a.recs[ev.CallID]; !ok {
		return
	}
	had, ok := a.first[ev.CallID]
	if !ok {
		a.order = append(a.order, ev.CallID)
	}
	if !ok || ev.Replays < had.Replays || (ev.Replays == had.Replays && ev.OccurredAt.Before(had.OccurredAt)) {
		a.first[ev.CallID] = ev
	}
}

// ordered is the events held, one per call, oldest first.
func (a *auditEvents) ordered() []pipeline.AuditEvent {
	out := make([]pipeline.AuditEvent, 0, len(a.order))
	for _, id := range a.order {
		out = append(out, a.first[id])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].OccurredAt.Before(out[j].OccurredAt) })
	return out
}

// audit re-evaluates the call of one audit event, the first of the call's
// (auditEvents).
func (w *window) audit(ctx context.Context, ev pipeline.AuditEvent) {
	rec, ok := w.recs[ev.CallID]
	if !ok || rec.done {
		return
	}
	rec.done = true
	switch {
	case rec.Verified:
		w.rep.Skip(rec.Tool, SkipToken)
		return
	case rec.Asserted:
		w.rep.Skip(rec.Tool, SkipRoles)
		return
	case ev.RawArgumentsRedacted == "" || redact.Hash([]byte(ev.RawArgumentsRedacted)) != ev.RawArgumentsHash:
		w.rep.Skip(rec.Tool, SkipRedacted)
		return
	}
	e := call.New(ev.ResponseID, 0, time.Now())
	e.CallID, e.Provider, e.Model, e.FinishReason = ev.CallID, ev.Provider, ev.ModelID, ev.FinishReason
	e.ToolName, e.RawArguments = ev.ToolName, ev.RawArgumentsRedacted
	e.Request = call.Request{Tenant: ev.Tenant, Principal: ev.Principal}
	e.Batch = call.Batch{ID: ev.ResponseID, Size: 1}
	outs := w.ev.Evaluate(ctx, e)
	if len(outs) != 1 {
		w.rep.Skip(rec.Tool, SkipOtherEnded)
		return
	}
	w.compare(rec, outs[0])
}
