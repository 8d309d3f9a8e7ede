package tool

import (
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/execgroup"
)

// groupFields checks executor.group and executor.concurrency.
func groupFields(e Executor) error {
	if e.Group != "" && !execgroup.Valid(e.Group) {
		return fmt.Errorf("executor.group: %q must be 1-64 letters, digits, '_' or '-'", e.Group)
	}
	if e.Concurrency < 0 || e.Concurrency > execgroup.MaxConcurrency {
		return fmt.Errorf("executor.concurrency: %d is outside 1..%d (0: the default, %d)", e.Concurrency, execgroup.MaxConcurrency, execgroup.DefaultConcurrency)
	}
	if err := retryFields(e.Retry); err != nil {
		return err
	}
	switch e.CircuitOpen {
	case "", execgroup.CircuitWait, execgroup.CircuitFail:
	default:
		return fmt.Errorf("executor.circuit_open: %q is neither %s (the default) nor %s", e.CircuitOpen, execgroup.CircuitWait, execgroup.CircuitFail)
	}
	return nil
}

// FailsFast reports whether d's calls fail at once while its group's
// circuit is open (executor.circuit_open: fail).
func (d *Definition) FailsFast() bool { return d.Executor.CircuitOpen == execgroup.CircuitFail }

// Group is the executor group d's calls run in: executor.group, or the
// tool's own name.
func (d *Definition) Group() string {
	if d.Executor.Group != "" {
		return d.Executor.Group
	}
	return d.Name
}

// Concurrency is how many calls of d's group run at once.
func (d *Definition) Concurrency() int {
	if d.Executor.Concurrency > 0 {
		return d.Executor.Concurrency
	}
	return execgroup.DefaultConcurrency
}

// retryFields checks executor.retry.
func retryFields(r *Retry) error {
	if r == nil {
		return nil
	}
	if r.Attempts < 0 || r.Attempts > execgroup.MaxAttempts {
		return fmt.Errorf("executor.retry.attempts: %d is outside 1..%d (0: the default)", r.Attempts, execgroup.MaxAttempts)
	}
	if len(r.Backoff) > execgroup.MaxAttempts {
		return fmt.Errorf("executor.retry.backoff: %d steps, at most %d", len(r.Backoff), execgroup.MaxAttempts)
	}
	for i, s := range r.Backoff {
		d, err := time.ParseDuration(s)
		if err != nil || d < time.Second || d > 24*time.Hour {
			return fmt.Errorf("executor.retry.backoff[%d]: %q is no duration of 1s..24h (a retry waits as a message scheduled to the second)", i, s)
		}
	}
	return nil
}

// RetryAttempts is the most attempts of a call of d's group d asks for;
// 0: the deployment's default.
func (d *Definition) RetryAttempts() int {
	if d.Executor.Retry == nil {
		return 0
	}
	return d.Executor.Retry.Attempts
}

// RetryBackoff is d's retry schedule; nil: the default. Only a definition
// that loaded (so checked) is asked.
func (d *Definition) RetryBackoff() []time.Duration {
	if d.Executor.Retry == nil {
		return nil
	}
	var out []time.Duration
	for _, s := range d.Executor.Retry.Backoff {
		if v, err := time.ParseDuration(s); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// checkGroups refuses tools of one file that share an executor group but
// not its concurrency. The group runs the largest of its tools' values
// (an unset one counts as the default), so "at most 2 at once to the slow
// ERP" written on one tool would silently become 8 when a second tool of
// the group says nothing: refused, naming both tools.
func checkGroups(defs []Definition) error {
	first := map[string]*Definition{}
	for i := range defs {
		d := &defs[i]
		g := d.Group()
		o, ok := first[g]
		if !ok {
			first[g] = d
			continue
		}
		if o.Concurrency() != d.Concurrency() {
			return fmt.Errorf("tool %s: executor.concurrency: %s, but tool %s of the same executor group %s runs %s: the group's tools share one concurrency (the largest would win); give them the same",
				d.Name, concurrencyText(d), o.Name, g, concurrencyText(o))
		}
	}
	return nil
}

func concurrencyText(d *Definition) string {
	if d.Executor.Concurrency == 0 {
		return fmt.Sprintf("%d (the default)", execgroup.DefaultConcurrency)
	}
	return fmt.Sprint(d.Executor.Concurrency)
}
