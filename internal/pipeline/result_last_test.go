package pipeline

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/streams"
)

// A call's result is its last output, held until the others are stored
// (worker.Output.After): a producer that has the result and asks an
// operator finds the call's status record, dead letter and, with
// AuditStream, the audit event on its stream (toolgate publish --wait, then
// toolgate status or dlq ls --call). Before, the result came second and was
// stored in parallel with them.
func TestOutputs_the_result_comes_last_once_record_audit_and_dead_letter_are_stored(t *testing.T) {
	em := &Emitter{AuditStream: true}
	e := secretCall(t)
	e.RepairAttempts = 1 // it was repaired before, so it wrote a record and writes its final one (ResultIsRecord)
	outs, err := em.Outputs("repair", e)
	if err != nil {
		t.Fatal(err)
	}
	last := outs[len(outs)-1]
	if !strings.HasPrefix(last.Subject, "toolgate.results.") || !last.After {
		t.Fatalf("last output %s (After %v), want the result held After the others; outputs %v", last.Subject, last.After, subjects(outs))
	}
	want := map[string]bool{streams.CallStatus(secretCall(t).CallID): false, streams.Audit("failed"): false, streams.DLQ("validate", "schema_invalid"): false}
	for _, o := range outs[:len(outs)-1] {
		if o.After {
			t.Errorf("%s is held too", o.Subject)
		}
		if _, ok := want[o.Subject]; ok {
			want[o.Subject] = true
		}
	}
	for subj, ok := range want {
		if !ok {
			t.Errorf("%s is not published before the result; outputs %v", subj, subjects(outs))
		}
	}
}
