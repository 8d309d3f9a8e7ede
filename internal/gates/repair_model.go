package gates

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/model"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/repair"
	"github.com/toolgate/toolgate/internal/worker"
)

// Failure codes of the repair gate's transient errors (the worker retries
// them; at MaxDeliver the call is dead-lettered as max_deliver).
const (
	codeModelUnavailable = "model_unavailable"
	codeRepairBudget     = "repair_budget"
)

// answer is what one repair request produced.
type answer struct {
	verdict  repair.Verdict
	requests int
	// finish, providerFinish and truncatedWhy describe the answer's call.
	finish, providerFinish, truncatedWhy string
}

// ask sends the repair request for in and reads the answer with the same
// provider normalizer as any response. It returns an error only for a
// failure that may pass (worker.Transient); a permanent refusal or an
// unreadable answer is a KindFailed verdict.
func (r *Repair) ask(ctx context.Context, in repair.Input) (answer, error) {
	cfg := r.Model.Config()
	rctx := ctx
	if r.Budget > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, r.Budget)
		defer cancel()
	}
	body, n, err := r.Model.Complete(rctx, repair.Prompt(in))
	failed := func(why string) (answer, error) {
		return answer{requests: n, verdict: repair.Verdict{Kind: repair.KindFailed, Why: why}}, nil
	}
	if err != nil {
		if terr := transient(ctx, rctx, r.Budget, n, err); terr != nil {
			return answer{requests: n}, terr
		}
		return failed("repair: the repair model refused the request: " + err.Error())
	}
	resp, err := provider.ParseResponse(string(cfg.Protocol), body, provider.WithMaxTokens(cfg.MaxTokens))
	if err != nil {
		return failed(fmt.Sprintf("repair: the repair model's answer is not a %s response: %v", cfg.Protocol, err))
	}
	if resp.Error != nil {
		return failed(fmt.Sprintf("repair: the repair model answered with an error: %s %s", resp.Error.Type, resp.Error.Message))
	}
	calls := make([]repair.Call, len(resp.Calls))
	for i, c := range resp.Calls {
		calls[i] = repair.Call{Name: c.Name, Arguments: c.Arguments}
	}
	a := answer{verdict: repair.Answer(calls, resp.Text), requests: n, finish: string(resp.Finish), providerFinish: resp.ProviderFinish}
	if len(resp.Calls) == 1 && resp.Calls[0].Truncated {
		a.truncatedWhy = "repair answer: " + resp.Calls[0].TruncatedWhy
	}
	return a, nil
}

// transient returns the worker.Transient error for a failed Complete that
// may pass later (the budget ran out, 408/429/5xx, timeouts, network), with
// the server's Retry-After as the delay; nil for a permanent refusal (another
// 4xx: bad key, unknown model, a request the server rejects).
func transient(parent, rctx context.Context, budget time.Duration, requests int, err error) error {
	switch {
	case parent.Err() != nil: // shutting down: someone else repairs it
		return worker.Transient(codeModelUnavailable, 0, fmt.Errorf("gates: repair: %w", err))
	case rctx.Err() != nil:
		return worker.Transient(codeRepairBudget, 0, fmt.Errorf("gates: repair: no answer from the repair model within the %s budget after %d request(s): %w", budget, requests, err))
	case model.Retryable(err):
		var he *model.HTTPError
		delay := time.Duration(0)
		if errors.As(err, &he) {
			delay = he.RetryAfter
		}
		return worker.Transient(codeModelUnavailable, delay, fmt.Errorf("gates: repair: %w", err))
	}
	return nil
}
