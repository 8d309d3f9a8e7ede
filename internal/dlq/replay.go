package dlq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/records"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/streams"
)

// Options configure a replay.
type Options struct {
	// ToStage sends every call to this stage instead of the stage that
	// dead-lettered it (parse, validate, business, policy or execute).
	ToStage string
	// DryRun plans the replay and publishes nothing.
	DryRun bool
	// Wait is how long to watch toolgate.results for the replayed calls'
	// new outcomes; 0 does not watch (every replayed call counts pending).
	Wait time.Duration
	// Progress, when set, is told how far each phase ("publish", "wait")
	// has come.
	Progress func(phase string, done, total int)
	// Denied replays calls a human denied (approval_denied) too; without it
	// they are skipped: a replay must not overturn a human decision unless
	// the operator asks for exactly that.
	Denied bool
	// Limit replays at most this many letters, the oldest first; the letters
	// after the Limit-th replayed one are left out of the summary (Beyond).
	// 0: no limit.
	Limit int
	Now   func() time.Time
	// By, when set, is who replays, recorded in each call's history
	// ("replayed from dlq seq N by NAME"): the console's user.
	By string
}

// Item is one dead letter in a replay.
type Item struct {
	Seq     uint64
	CallID  string // for input: the response id
	Stage   string // where it was sent (for input: accumulate)
	Subject string
	Skip    string      // why it was not replayed; empty: replayed (or planned)
	Outcome call.Status // the new terminal status; empty: none seen yet
}

// Summary is what a replay did.
type Summary struct {
	Selected    int // letters given
	Replayed    int // republished (DryRun: would be)
	Skipped     int // not replayable, or superseded by a newer letter of the same call
	Executed    int // replayed and now ended ok (executed, dry_run)
	FailedAgain int // replayed and ended with a failure again
	Pending     int // replayed, no outcome within Wait (e.g. waiting for approval)
	Beyond      int // letters left for a later run by Options.Limit
	Outcomes    map[call.Status]int
	Items       []Item
}

// Replay republishes dead letters, each with a new message id and the same
// call id. A call envelope is Reset into the entry status of its stage
// (the stage its own history says failed it, or an earlier Options.ToStage;
// never a stage past a gate that has not sealed it: replay_stage.go), its Replays raised
// past any earlier replay (so every output of the replay gets new message
// ids), its status record updated, and it is published to
// toolgate.gate.<stage>: a call that already executed meets its stored
// idempotency record at the execute gate and returns the stored result
// instead of running again. Input that never became a call is republished
// to its original subject with its original headers.
//
// Of several letters of one call only the newest is replayed. A call whose
// stream never finalized (transport_incomplete) is never replayed: it must
// never execute. A call whose status record says it has ended ok since
// (replayed and executed) is skipped as settled, so the summary counts only
// what this replay changed; a call a human denied is skipped unless
// Options.Denied. With Wait > 0 Replay watches the results stream for the
// replayed calls' new outcomes and counts them.
func Replay(ctx context.Context, js jetstream.JetStream, letters []Letter, o Options) (Summary, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ToStage != "" && streams.Entry(o.ToStage) == "" {
		return Summary{}, fmt.Errorf("dlq: --to-stage %q: a replay enters parse, validate, business, policy or execute", o.ToStage)
	}
	calls, err := js.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		return Summary{}, fmt.Errorf("dlq: bucket %s: %w", streams.BucketCalls, err)
	}
	fate, err := fates(ctx, records.Reader{JS: js}, letters)
	if err != nil {
		return Summary{}, err
	}
	plan, beyond := limit(planReplay(letters, o.ToStage, fate, o.Denied), o.Limit)
	if err := route(ctx, js, plan); err != nil {
		return Summary{}, err
	}
	sum := Summary{Selected: len(plan), Beyond: beyond, Outcomes: map[call.Status]int{}}
	for _, it := range plan {
		if it.skip != "" {
			sum.Skipped++
		} else {
			sum.Replayed++
		}
	}
	if o.DryRun {
		sum.Items = items(plan)
		return sum, nil
	}
	from, err := resultsTail(ctx, js)
	if err != nil {
		return sum, err
	}
	var futures []jetstream.PubAckFuture
	done := 0
	for _, p := range plan {
		if p.skip != "" {
			continue
		}
		m, err := p.message(ctx, js, calls, o.Now(), o.By)
		if err != nil {
			return sum, err
		}
		f, err := js.PublishMsgAsync(m.msg, jetstream.WithMsgID(m.id))
		if err != nil {
			return sum, fmt.Errorf("dlq: publish seq %d: %w", p.letter.Seq, err)
		}
		futures = append(futures, f)
		done++
		if o.Progress != nil {
			o.Progress("publish", done, sum.Replayed)
		}
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return sum, fmt.Errorf("dlq: publish to %s: %w", f.Msg().Subject, err)
		case <-ctx.Done():
			return sum, ctx.Err()
		}
	}
	if o.Wait > 0 {
		if err := watch(ctx, js, from, plan, o); err != nil {
			return sum, err
		}
	}
	for _, p := range plan {
		if p.skip != "" {
			continue
		}
		switch {
		case p.outcome == "":
			sum.Pending++
		case p.outcome.OK():
			sum.Executed++
		default:
			sum.FailedAgain++
		}
		if p.outcome != "" {
			sum.Outcomes[p.outcome]++
		}
	}
	sum.Items = items(plan)
	return sum, nil
}

// planned is one letter's replay.
type planned struct {
	letter  Letter
	stage   string
	subject string // where the replay is published (set by route)
	key     string // call id, or the response id of input
	skip    string
	outcome call.Status
}

// limit keeps the plan up to its n-th replayed item (n <= 0: all) and
// returns how many letters it left out.
func limit(plan []*planned, n int) ([]*planned, int) {
	if n <= 0 {
		return plan, 0
	}
	for i, p := range plan {
		if p.skip == "" {
			if n--; n == 0 {
				return plan[:i+1], len(plan) - i - 1
			}
		}
	}
	return plan, 0
}

// planReplay picks the newest letter of each call and where it goes, and
// skips what must not or need not run again (fate: by sequence).
func planReplay(letters []Letter, toStage string, fate map[uint64]Fate, denied bool) []*planned {
	sorted := append([]Letter(nil), letters...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Seq > sorted[j].Seq })
	seen := map[string]bool{}
	var plan []*planned
	for _, l := range sorted {
		p := &planned{letter: l, key: l.CallID}
		switch {
		case l.Malformed != "":
			p.key = "malformed-seq:" + strconv.FormatUint(l.Seq, 10)
			p.skip = "malformed dead letter (" + l.Malformed + "): not replayed"
		case l.Input():
			p.key, p.stage = "input:"+l.ResponseID, streams.Accumulate
			if l.ResponseID == "" {
				p.key = "input-seq:" + strconv.FormatUint(l.Seq, 10)
			}
			if !ingest(l.OrigSubject) {
				p.skip = "input that arrived on " + redact.Clip(l.OrigSubject) + ", not from a producer: only input from an ingest subject is replayed"
			}
		case isTransportIncomplete(l.Envelope):
			p.skip = "the stream never finalized: it is never executed; the producer must send the response again"
		case fate[l.Seq].Kind == FateExecuted:
			p.skip = "settled: its call has " + string(fate[l.Seq].Status) + " since (replayed before); nothing to replay"
		case isDenied(l) && !denied:
			p.skip = "a human denied it (approval_denied): a replay would ask policy again; replay it on purpose with --failure approval_denied"
		default:
			p.stage, p.skip = replayStage(l, toStage)
		}
		if seen[p.key] && p.skip == "" {
			p.skip = "a newer dead letter of the same call is replayed"
		}
		seen[p.key] = true
		plan = append(plan, p)
	}
	sort.Slice(plan, func(i, j int) bool { return plan[i].letter.Seq < plan[j].letter.Seq })
	return plan
}

func isDenied(l Letter) bool {
	return call.Status(l.Failure) == call.ApprovalDenied || l.Envelope.Status == call.ApprovalDenied || l.Envelope.Failure == call.ApprovalDenied
}

func isTransportIncomplete(e *call.Envelope) bool {
	return e.Status == call.TransportIncomplete || e.Failure == call.TransportIncomplete
}

type outMsg struct {
	msg *nats.Msg
	id  string
}

// message builds the republished message of p.
func (p *planned) message(ctx context.Context, js jetstream.JetStream, calls jetstream.KeyValue, now time.Time, by string) (outMsg, error) {
	l := p.letter
	if l.Input() {
		to, rid := replayTo(l.OrigSubject)
		m := nats.NewMsg(to)
		for k, v := range l.Header {
			m.Header[k] = append([]string(nil), v...)
		}
		for _, k := range []string{streams.HeaderStage, streams.HeaderFailure, streams.HeaderError, streams.HeaderOrigSubject, nats.MsgIdHdr} {
			m.Header.Del(k)
		}
		if rid != "" { // off its claimed subject: the id goes in the header
			m.Header.Set(streams.HeaderResponseID, rid)
		}
		m.Header.Set(streams.HeaderReplay, strconv.FormatUint(l.Seq, 10))
		m.Data = l.Data
		return outMsg{msg: m, id: fmt.Sprintf("replay:dlq:%d:%d", l.Seq, now.UnixNano())}, nil
	}
	e := *l.Envelope
	e.History = append([]call.Step(nil), e.History...)
	prev, err := recordedReplays(ctx, js, e.CallID)
	if err != nil {
		return outMsg{}, err
	}
	note := fmt.Sprintf("replayed from dlq seq %d", l.Seq)
	if by != "" {
		note += " by " + by
	}
	e.Reset(p.stage, streams.Entry(p.stage), now, note)
	e.Replays = max(e.Replays, prev) + 1
	body, err := e.Marshal()
	if err != nil {
		return outMsg{}, fmt.Errorf("dlq: %w", err)
	}
	// The record moves now, so a second replay before this one is handled
	// still numbers past it (and gets fresh message ids).
	rec, err := json.Marshal(pipeline.StatusOf(e))
	if err != nil {
		return outMsg{}, fmt.Errorf("dlq: %w", err)
	}
	if _, err := calls.Put(ctx, e.CallID, rec); err != nil {
		return outMsg{}, fmt.Errorf("dlq: status of %s: %w", e.CallID, err)
	}
	m := nats.NewMsg(p.subject)
	m.Header.Set(streams.HeaderCallID, e.CallID)
	m.Header.Set(streams.HeaderResponseID, e.ResponseID)
	m.Header.Set(streams.HeaderStatus, string(e.Status))
	m.Header.Set(streams.HeaderTool, e.ToolName)
	m.Header.Set(streams.HeaderProvider, e.Provider)
	m.Header.Set(streams.HeaderReplay, strconv.FormatUint(l.Seq, 10))
	m.Data = body
	return outMsg{msg: m, id: fmt.Sprintf("%s:replay:%d", e.CallID, e.Replays)}, nil
}

// recordedReplays reads how often the call was replayed already from its
// status record, or from its result when it ended without one (issue 30:
// then it was never replayed, for every hop of a replayed call writes its
// record); 0 when there is neither, or the record is unreadable (it says
// nothing about replays).
func recordedReplays(ctx context.Context, js jetstream.JetStream, callID string) (int, error) {
	rec, err := records.Reader{JS: js}.Ended(ctx, callID)
	if errors.Is(err, records.ErrMalformedStatus) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("dlq: status of %s: %w", callID, err)
	}
	if rec == nil {
		return 0, nil
	}
	return rec.Replays, nil
}

func items(plan []*planned) []Item {
	out := make([]Item, 0, len(plan))
	for _, p := range plan {
		it := Item{Seq: p.letter.Seq, CallID: p.letter.CallID, Stage: p.stage, Skip: p.skip, Outcome: p.outcome}
		if p.letter.Input() {
			it.CallID = p.letter.ResponseID
			it.Subject, _ = replayTo(p.letter.OrigSubject)
		} else if p.stage != "" {
			it.Subject = p.subject
		}
		out = append(out, it)
	}
	return out
}
