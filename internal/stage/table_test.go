package stage

import (
	"testing"

	"github.com/toolgate/toolgate/streams"
)

// TestTable_every_stage_has_a_binding_and_back: a row of streams.Table
// without code, or code without a row, is caught here rather than at a
// deployment's start.
func TestTable_every_stage_has_a_binding_and_back(t *testing.T) {
	binds := bindings()
	for _, st := range streams.Names() {
		if b, ok := binds[st]; !ok || b.build == nil {
			t.Errorf("stage %s has no binding", st)
		}
	}
	for name := range binds {
		if !streams.IsStage(name) {
			t.Errorf("binding %s has no row in streams.Table", name)
		}
	}
	if binds[streams.Execute].concurrency != 16 {
		t.Errorf("execute runs %d handlers by default, want 16", binds[streams.Execute].concurrency)
	}
}
