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
	return nil
}

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
