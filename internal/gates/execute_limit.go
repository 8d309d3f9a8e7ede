package gates

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/internal/limit"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/worker"
)

// Limit events, as LimitEvent is told of them.
const (
	LimitCharged  = "charged"  // a call that runs used the limit
	LimitRejected = "rejected" // a call ended limit_exceeded
	LimitWaited   = "waited"   // a call was held for the window (on_exceed: wait)
)

// charges are what the call uses of its tool's limits (internal/limit),
// checked and recorded by the store with the claim; none for a tool
// without limits, which then costs nothing more.
func charges(e call.Envelope, t *tool.Compiled) ([]limit.Charge, error) {
	if len(t.Limits) == 0 {
		return nil, nil
	}
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(e.Arguments))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		return nil, fmt.Errorf("the arguments could not be read to meter the call: %v", err)
	}
	in := limit.Input{Tenant: e.Request.Tenant, Principal: e.Request.Principal, Roles: e.Request.Roles, Tool: e.ToolName, Args: args}
	out := make([]limit.Charge, 0, len(t.Limits))
	for _, l := range t.Limits {
		c, err := l.Charge(in)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// overLimit holds or ends a call a used-up limit refused. With on_exceed:
// wait it is redelivered when the window lets it fit (worker.Retry: a nak
// with that delay, not a failure), as long as that is within max_wait of
// its arrival at execute and the consumer has deliveries left; otherwise,
// or with reject, it ends limit_exceeded, nothing run and nothing charged.
func (x *Execute) overLimit(ctx context.Context, e call.Envelope, t *tool.Compiled, le *idem.LimitError) ([]call.Envelope, error) {
	var lim *limit.Compiled
	for _, l := range t.Limits {
		if l.Def.Name == le.Limit {
			lim = l
		}
	}
	now := x.Now()
	if lim != nil && lim.Wait && !le.PassAt.IsZero() && !le.PassAt.After(arrived(e, now).Add(lim.MaxWait)) {
		if n, maxD := worker.Deliveries(ctx); maxD <= 0 || n+1 < uint64(maxD) {
			x.limitEvent(le.Limit, LimitWaited)
			return nil, &LimitHold{Limit: le.Limit, Why: limitMessage(le, lim), Until: le.PassAt,
				retry: worker.Retry(max(le.PassAt.Sub(now), 10*time.Millisecond))}
		}
	}
	x.limitEvent(le.Limit, LimitRejected)
	return x.end(e, call.LimitExceeded, limitMessage(le, lim))
}

// LimitHold is the error of a call a limit holds (on_exceed: wait): a
// worker.Retry until the window lets it fit, carrying which limit and why,
// so the stage's status record can say what the call waits for (the
// console's limits page and the call's story read it).
type LimitHold struct {
	Limit string    // the limit's name
	Why   string    // limitMessage: never the key
	Until time.Time // when the call fits
	retry error
}

func (h *LimitHold) Error() string { return h.Why + ": " + h.retry.Error() }
func (h *LimitHold) Unwrap() error { return h.retry }

// limitMessage says which limit and when the call would fit; never the key
// (it may be made of arguments, and the model sees this).
func limitMessage(le *idem.LimitError, lim *limit.Compiled) string {
	window := ""
	if lim != nil {
		window = " per " + lim.Def.Window
	}
	if le.PassAt.IsZero() {
		return fmt.Sprintf("limit %s: at most %d%s; this call alone needs more, so it can never fit", le.Limit, le.Max, window)
	}
	return fmt.Sprintf("limit %s: %d of %d%s used; this call fits from %s", le.Limit, le.Used, le.Max, window, le.PassAt.UTC().Format(time.RFC3339))
}

// arrived is when the call reached execute: the time of its last step
// before it (approved), the same on every redelivery.
func arrived(e call.Envelope, now time.Time) time.Time {
	if n := len(e.History); n > 0 && !e.History[n-1].At.IsZero() {
		return e.History[n-1].At
	}
	return now
}

func (x *Execute) limitEvent(name, event string) {
	if x.LimitEvent != nil {
		x.LimitEvent(name, event, 0)
	}
}

// LimitCharges are what the call e of tool t would be charged at execute:
// for a replay that meters the calls in memory (internal/whatif) exactly as
// this gate computes the charges.
func LimitCharges(e call.Envelope, t *tool.Compiled) ([]limit.Charge, error) { return charges(e, t) }
