// Package gates holds the envelope-level logic of each stage: it applies a
// pure core (internal/parse, internal/schema, internal/rules, internal/policy, ...) to a call
// and moves the call's status. No NATS here except through the interfaces a
// gate is given.
package gates

import (
	"time"

	"github.com/toolgate/toolgate/internal/tool"
)

// Tools is what gates need of the registry.
type Tools interface {
	Lookup(name string) (*tool.Compiled, bool)
	Names() []string
}

// Clock returns the time; tests fix it.
type Clock func() time.Time
