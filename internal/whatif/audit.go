package whatif

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
// saw them, redacted: TOOLGATE_AUDIT), both of which the console user may
// read — never TOOLGATE_IN, which holds what producers sent, tokens too. A
// call whose audit arguments were redacted (their hash is not the recorded
// hash of the arguments) is counted as not re-evaluated, never run on
// redacted values, so what it re-runs is exactly what the gates saw.
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
	st, err := src.JS.Stream(ctx, streams.StreamAudit)
	if err != nil {
		return nil, fmt.Errorf("whatif: read %s: %w", streams.StreamAudit, err)
	}
	start := src.Since.Add(-slack)
	c, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{streams.Audit(">")},
		DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &start})
	if err != nil {
		return nil, fmt.Errorf("whatif: read %s: %w", streams.StreamAudit, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("whatif: read %s: %w", streams.StreamAudit, err)
	}
	last := info.State.LastSeq
	w := window{ev: ev, rep: rep, recs: recs, tool: src.Tool}
	for last > 0 {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("whatif: read %s: %w", streams.StreamAudit, err)
		}
		m, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			if errors.Is(err, jetstream.ErrNoMessages) && ctx.Err() == nil {
				break // nothing at or after the window's start
			}
			return nil, fmt.Errorf("whatif: read %s: %w", streams.StreamAudit, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return nil, fmt.Errorf("whatif: read %s: %w", streams.StreamAudit, err)
		}
		w.audit(ctx, m.Data())
		if md.Sequence.Stream >= last {
			break
		}
	}
	w.finish()
	for _, rec := range recs {
		if !rec.done {
			rep.Skip(rec.Tool, SkipNoAudit)
		}
	}
	return rep, nil
}

// audit re-evaluates the call of one audit event, the first of the call's
// (a replay's later events carry the same arguments, or repaired ones).
func (w *window) audit(ctx context.Context, data []byte) {
	var ev pipeline.AuditEvent
	if json.Unmarshal(data, &ev) != nil {
		return
	}
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
