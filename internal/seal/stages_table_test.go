package seal_test

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/streams"
)

// TestSeal_every_gate_of_the_stage_table_is_demanded: the gates execute
// demands a seal of are exactly the stage table's stages a replay may enter
// before execute, in table order, each sealing with the status the next one
// is entered in; and every stage but execute seals. A gate added to
// streams' table and not to stages_gen.go (make generate) fails here, so it
// can never be skipped unnoticed.
func TestSeal_every_gate_of_the_stage_table_is_demanded(t *testing.T) {
	var entered []streams.Stage
	for _, st := range streams.Table() {
		if st.Entry != "" {
			entered = append(entered, st)
		}
		if st.Name != streams.Execute && !slices.Contains(seal.Sealing(), st.Name) {
			t.Errorf("stage %s of the stage table does not seal (seal.Sealing %v): run make generate", st.Name, seal.Sealing())
		}
	}
	if len(entered) == 0 || entered[len(entered)-1].Name != streams.Execute {
		t.Fatalf("the last stage a replay may enter is not execute: %v", entered)
	}
	var want []string
	for i, st := range entered[:len(entered)-1] {
		want = append(want, st.Name)
		if got, next := seal.Verdict(st.Name), entered[i+1].Entry; got != next {
			t.Errorf("seal.Verdict(%s) = %q, want %q (the status %s is entered in)", st.Name, got, next, entered[i+1].Name)
		}
	}
	if got := seal.Gates(); !slices.Equal(got, want) {
		t.Fatalf("seal.Gates() = %v, the stage table's gates = %v: run make generate", got, want)
	}
	if got := seal.Verdict(streams.Execute); got != "" {
		t.Errorf("seal.Verdict(execute) = %q: execute seals nothing", got)
	}
}
