// Package gates holds the envelope-level logic of each stage: it applies a
// pure core (internal/parse, internal/schema, internal/rules, internal/policy, ...) to a call
// and moves the call's status: one envelope in, the envelopes it became out.
// No file here imports NATS (internal/arch TestGates_import_no_nats): reading
// streams is internal/ingest's, the batch records internal/batch's, and a gate
// reaches a store only through the interfaces it is given.
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
