package metrics

import (
	"slices"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/streams"
)

// zero creates at zero every series of the alerted counters whose label set
// is known when the process starts. Prometheus sees a series from its first
// scrape: one born at 1 shows no increase(), so without this the first dead
// letter of a class, the first forged envelope at a stage and the first
// malformed record of a source would never alert. Tool series are made at
// scrape time from the registry (known.go).
func (m *Metrics) zero() {
	for _, k := range deadLetterLabels() {
		m.deadLetters.WithLabelValues(k[0], k[1])
	}
	for _, st := range sealStages() {
		m.sealInvalidTotal.WithLabelValues(st)
	}
	for _, src := range recordSources() {
		m.malformed.WithLabelValues(src)
	}
}

// deadLetterLabels are the (stage, failure) pairs of
// toolgate_dead_letters_total that the state machine lets a stage record
// (streams.FailedAt names the stage whose history step holds the failure):
// the terminal failures and the repairable classes that follow a stage's
// inputs, and those that follow the statuses only that stage moves on
// (repairing, approval_required: no stage takes them as input); a stage
// without inputs (accumulate) starts its calls in received (call.New). Any
// stage may end a call output_too_large. The failure codes of a stage that
// gave up on an input (max_deliver, panic, ...) are not in the state
// machine: their series appear on first use, and the alert rules see those
// through their "new series" clause (deploy/prometheus/toolgate-rules.yml).
func deadLetterLabels() [][2]string {
	var out [][2]string
	for _, st := range streams.Table() {
		inputs := st.Inputs
		if len(inputs) == 0 {
			inputs = []call.Status{call.New("", 0, time.Time{}).Status}
		}
		seen := map[call.Status]bool{}
		var classes []call.Status
		var walk func(call.Status)
		walk = func(s call.Status) {
			for _, n := range call.Successors(s) {
				if seen[n] {
					continue
				}
				seen[n] = true
				switch {
				case n.Repairable(), n.Terminal() && !n.OK() && n != call.Failed:
					classes = append(classes, n)
				case !n.Terminal() && streams.Next(n) == "":
					walk(n)
				}
			}
		}
		for _, s := range inputs {
			walk(s)
		}
		if !seen[call.OutputTooLarge] {
			classes = append(classes, call.OutputTooLarge)
		}
		for _, c := range classes {
			out = append(out, [2]string{st.Name, string(c)})
		}
	}
	return out
}

// sealStages are the stage label values of toolgate_seal_invalid_total:
// what seal.NoteStage reads back from the note of any stage's seal, and
// "unknown" (what it reads from any other note).
func sealStages() []string {
	var out []string
	for _, st := range append(streams.Names(), "") {
		if l := seal.NoteStage(seal.Note(st)); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// recordSources are the source label values of
// toolgate_malformed_records_total that the stages can report: the buckets
// of the stage table and the tools bucket every stage reads.
func recordSources() []string {
	out := []string{streams.BucketTools}
	for _, st := range streams.Table() {
		for _, b := range st.Buckets {
			if !slices.Contains(out, b.Name) {
				out = append(out, b.Name)
			}
		}
	}
	return out
}
