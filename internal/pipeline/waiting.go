package pipeline

import (
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// WaitNotePrefix opens the history note of every wait step.
const WaitNotePrefix = "waiting: "

// MaxWaitSteps bounds the wait steps a status record carries: the oldest go
// first. Attempts are bounded by the consumer's MaxDeliver already.
const MaxWaitSteps = 32

// Waiting is the status record of e, as stage received it, waiting for w
// since w.Since: e's history plus one wait step at now (WaitStep), with
// Waiting set. It is how a stage that retries a call tells `toolgate
// status` where the call is; the call's next transition clears Waiting.
func (em *Emitter) Waiting(stage string, e call.Envelope, w Wait, now time.Time) worker.Output {
	e.History = append(e.History[:len(e.History):len(e.History)], WaitStep(stage, e.Status, w, now))
	rec := StatusOf(em.public(e))
	rec.Waiting = &w
	return worker.Output{Subject: streams.CallStatus(e.CallID), Data: em.fitJSON(rec, e.CallID, e.ResponseID)}
}

// WaitStep is the history step of one wait: the call's status unchanged,
// and a note such as "waiting: no executor listens on toolgate.exec.x
// (attempt 3 of 10)".
func WaitStep(stage string, status call.Status, w Wait, now time.Time) call.Step {
	note := WaitNotePrefix + result.CutText(w.Detail, TextMax)
	if w.Detail == "" {
		note = WaitNotePrefix + w.For
	}
	switch {
	case w.Attempt > 0 && w.Of > 0:
		note += fmt.Sprintf(" (attempt %d of %d)", w.Attempt, w.Of)
	case w.Attempt > 0:
		note += fmt.Sprintf(" (attempt %d)", w.Attempt)
	}
	return call.Step{Stage: stage, Status: status, At: now.UTC(), Note: note}
}

// IsWaitStep reports whether s is a wait step of stage for a call in status.
func IsWaitStep(s call.Step, stage string, status call.Status) bool {
	return s.Stage == stage && s.Status == status && strings.HasPrefix(s.Note, WaitNotePrefix)
}

// CarriedWaits are the wait steps rec holds past e's history: what earlier
// deliveries of e at stage recorded while it waited, to be kept in the
// history of whatever e becomes. Nothing unless rec is e's record waiting
// at stage, in the same repair round and replay, with e's history as its
// prefix; at most MaxWaitSteps, the newest.
func CarriedWaits(rec StatusRecord, e call.Envelope, stage string) []call.Step {
	n := len(e.History)
	if rec.Waiting == nil || rec.Waiting.Stage != stage || rec.CallID != e.CallID || rec.Replays != e.Replays ||
		rec.RepairAttempts != e.RepairAttempts || n == 0 || len(rec.History) <= n {
		return nil
	}
	last, mine := e.History[n-1], rec.History[n-1]
	if last.Stage != mine.Stage || last.Status != mine.Status || !last.At.Equal(mine.At) {
		return nil
	}
	steps := rec.History[n:]
	for _, s := range steps {
		if !IsWaitStep(s, stage, e.Status) {
			return nil
		}
	}
	if len(steps) > MaxWaitSteps {
		steps = steps[len(steps)-MaxWaitSteps:]
	}
	out := make([]call.Step, len(steps))
	for i, s := range steps {
		s.Note = result.CutText(s.Note, TextMax)
		out[i] = s
	}
	return out
}

// WaitingSince is when e began to wait at stage: the first of the wait
// steps that end its history, or now when there are none.
func WaitingSince(e call.Envelope, stage string, now time.Time) time.Time {
	since := now
	for i := len(e.History) - 1; i >= 0 && IsWaitStep(e.History[i], stage, e.Status); i-- {
		since = e.History[i].At
	}
	return since
}
