package tool

import (
	"fmt"

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
