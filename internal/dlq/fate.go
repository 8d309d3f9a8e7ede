package dlq

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/records"
)

// Fate kinds: what became of a dead letter's call since it was written.
const (
	FateOpen       = "open"         // not replayed since: it waits for the operator
	FateExecuted   = "executed"     // the call has ended ok since (a replay executed it): settled
	FateFailed     = "failed again" // replayed and failed again
	FateUnderWay   = "under way"    // replayed, no outcome yet (in flight or waiting)
	FateSuperseded = "superseded"   // a newer dead letter of the same call carries it on: settled
	FateUntracked  = "untracked"    // input that never became a call: no status record to read
)

// Fate is what became of a letter's call, read from its status record in
// toolgate_calls.
type Fate struct {
	Kind   string
	Status call.Status // the call's status now (failure class for failed); empty: no record
	By     uint64      // FateSuperseded: the newer letter's sequence
}

// Settled reports whether nothing is left to do for the letter: its call
// executed, or a newer letter of the call carries it on. `dlq ls` hides
// settled letters unless asked for all, and replay skips the executed.
func (f Fate) Settled() bool { return f.Kind == FateExecuted || f.Kind == FateSuperseded }

// String is the fate as `dlq ls` shows it.
func (f Fate) String() string {
	switch f.Kind {
	case FateOpen:
		return "not replayed"
	case FateExecuted:
		return "replayed → " + string(f.Status)
	case FateFailed:
		return "replayed → failed again (" + string(f.Status) + ")"
	case FateUnderWay:
		return "replayed → waiting (" + string(f.Status) + ")"
	case FateSuperseded:
		return "superseded by seq " + strconv.FormatUint(f.By, 10)
	}
	return "-"
}

// fateOf reads l's fate from its call's status record (nil: none).
func fateOf(l Letter, rec *pipeline.StatusRecord) Fate {
	if l.Input() || l.Malformed != "" {
		return Fate{Kind: FateUntracked}
	}
	if rec == nil {
		return Fate{Kind: FateOpen}
	}
	st := rec.Status
	if st == call.Failed && rec.Failure != "" {
		st = rec.Failure
	}
	switch {
	case rec.Status.OK():
		// Ended ok, by a replay or otherwise (an outcome_unknown
		// reconciled): nothing runs again.
		return Fate{Kind: FateExecuted, Status: rec.Status}
	case rec.Replays <= l.Envelope.Replays:
		return Fate{Kind: FateOpen, Status: st}
	case rec.Status.Terminal():
		return Fate{Kind: FateFailed, Status: st}
	}
	return Fate{Kind: FateUnderWay, Status: st}
}

// Fates reads the fate of each letter, by sequence. Of several letters of
// one call among letters, all but the newest are superseded.
func Fates(ctx context.Context, js jetstream.JetStream, letters []Letter) (map[uint64]Fate, error) {
	return fates(ctx, records.Reader{JS: js}, letters)
}

func fates(ctx context.Context, rd records.Reader, letters []Letter) (map[uint64]Fate, error) {
	newest := map[string]uint64{}
	for _, l := range letters {
		if !l.Input() && l.Malformed == "" && l.Seq > newest[l.CallID] {
			newest[l.CallID] = l.Seq
		}
	}
	recs := map[string]*pipeline.StatusRecord{}
	out := make(map[uint64]Fate, len(letters))
	for _, l := range letters {
		if l.Input() || l.Malformed != "" {
			out[l.Seq] = Fate{Kind: FateUntracked}
			continue
		}
		rec, ok := recs[l.CallID]
		if !ok {
			var err error
			if rec, err = statusOf(ctx, rd, l.CallID); err != nil {
				return nil, err
			}
			recs[l.CallID] = rec
		}
		f := fateOf(l, rec)
		if n := newest[l.CallID]; n != l.Seq && f.Kind != FateExecuted {
			f = Fate{Kind: FateSuperseded, Status: f.Status, By: n}
		}
		out[l.Seq] = f
	}
	return out, nil
}

// statusOf reads a call's status record: the stored one, or for a call
// that ended without one (issue 30) its result; nil when there is none or
// it cannot be read (it then says nothing about the call's fate).
func statusOf(ctx context.Context, rd records.Reader, callID string) (*pipeline.StatusRecord, error) {
	rec, err := rd.Ended(ctx, callID)
	if errors.Is(err, records.ErrMalformedStatus) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dlq: status of %s: %w", callID, err)
	}
	return rec, nil
}
