// Package records is the one lookup of a call's status record that every
// reader uses (toolgate status, calls ls, the console, dlq, whatif, the
// chaos judge).
//
// A call that ends without having waited, been repaired or been replayed
// writes no status record (issue 30, pipeline.ResultIsRecord): its result
// message on toolgate.results.<tenant>.<response-id> is its record. So a
// record is, in this order: the calls bucket's (a record that still says
// the call waits gives way to a result of the call stored since, which
// ended it); else the call's result, found on the one results subject its
// call id names (wire.CallID: the tenant key and the response id), the
// message whose Toolgate-Call-Id header and body both name the call; else,
// for a call in flight, what its hop says (internal/inflight).
package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/inflight"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// MaxPerResponse bounds the results one lookup reads on a response's
// subject: a response has one result per call it proposed.
const MaxPerResponse = 4096

// Reader finds status records. JS is the reader's own connection; its user
// must read the calls bucket and TOOLGATE_RESULTS (and the gate streams,
// for calls in flight).
type Reader struct {
	JS jetstream.JetStream
	// Limit bounds the hops read per gate stream for a call in flight
	// (inflight.Find); 0: inflight.MaxScan.
	Limit int
}

// Find is the status record of callID: stored, from its result, or from
// its hop in flight; nil when there is none of them.
func (r Reader) Find(ctx context.Context, callID string) (*pipeline.StatusRecord, error) {
	rec, err := r.Ended(ctx, callID)
	if rec != nil || err != nil {
		return rec, err
	}
	found, err := inflight.Find(ctx, r.JS, callID, r.Limit)
	if err != nil {
		return nil, fmt.Errorf("call %s in flight: %w", callID, err)
	}
	return found, nil
}

// Ended is Find without the calls in flight: the stored record, or the
// call's result; nil when there is neither (dlq, which reads it per dead
// letter, has no hop to look for).
func (r Reader) Ended(ctx context.Context, callID string) (*pipeline.StatusRecord, error) {
	rec, err := r.Stored(ctx, callID)
	if err != nil {
		return nil, err
	}
	if rec != nil && (rec.Status.Terminal() || rec.Waiting == nil) {
		return rec, nil
	}
	// No record, or one that says the call waits at a stage (a retry
	// wait, waits.go): its result, when stored since, ended it.
	res, err := r.Result(ctx, callID)
	if err != nil {
		return nil, err
	}
	if res != nil && Supersedes(*res, rec) {
		out := OfResult(*res)
		return &out, nil
	}
	return rec, nil
}

// Supersedes reports whether res tells more of its call than rec (nil:
// none): there is no record, or the record says the call waits at a stage
// and res ended the same round of replays. A result of before an operator
// replay (fewer replays than the record) is history, not the call's state.
func Supersedes(res wire.Result, rec *pipeline.StatusRecord) bool {
	return rec == nil || (!rec.Status.Terminal() && rec.Waiting != nil && res.Replays >= rec.Replays)
}

// Stored is the record of callID in the calls bucket; nil when there is
// none (or callID cannot be a key).
func (r Reader) Stored(ctx context.Context, callID string) (*pipeline.StatusRecord, error) {
	kv, err := r.JS.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", streams.BucketCalls, err)
	}
	e, err := kv.Get(ctx, callID)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrInvalidKey) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("call %s: %w", callID, err)
	}
	rec, err := DecodeStatus(callID, e.Value())
	if err != nil {
		return nil, err
	}
	return &rec, nil
}

// Result is the stored result of callID; nil when there is none. It reads
// the results of the response the call id names, on the subject of the
// tenant it names (Subject), and takes the message whose Toolgate-Call-Id
// header is callID and whose body says so too: a message on the subject
// under another call's id, or whose body names another call, is not the
// call's result.
func (r Reader) Result(ctx context.Context, callID string) (*wire.Result, error) {
	subject, ok := Subject(callID)
	if !ok {
		return nil, nil
	}
	res, err := r.resultOn(ctx, subject, callID)
	if res != nil || err != nil {
		return res, err
	}
	if tk, _ := wire.SplitCallID(callID); tk == "" {
		// No tenant in the call id: the call had none, or its id was made
		// before tenants had keys of their own, when any tenant's result
		// went on toolgate.results.<tenant>.<rid> under the bare id.
		rid, _ := responseOf(callID)
		return r.resultOn(ctx, streams.ResultsOf(rid), callID)
	}
	return nil, nil
}

// resultOn reads the results on subject (a filter) for callID's: the
// messages on it by sequence (STREAM.MSG.GET, next by subject: a response
// has one result per call, so a few round trips and no consumer to make),
// the newest that is callID's winning (a replayed call's outcome is its
// last). A read the cluster could not answer (no responders while a
// stream leader moves, a timeout) is tried again, a few times.
func (r Reader) resultOn(ctx context.Context, subject, callID string) (*wire.Result, error) {
	var err error
	for attempt := range retries {
		var found *wire.Result
		if found, err = r.scanSubject(ctx, subject, callID); err == nil || !transient(err) {
			return found, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Duration(attempt+1) * 250 * time.Millisecond):
		}
	}
	return nil, err
}

// retries bounds the attempts of one result lookup.
const retries = 4

// transient reports whether err may pass when the read is tried again.
func transient(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, jetstream.ErrNoStreamResponse)
}

// scanSubject reads subject (partition 0's form) in every results stream
// (streams.ResultsStreams) for callID's newest result.
func (r Reader) scanSubject(ctx context.Context, subject, callID string) (*wire.Result, error) {
	refs, err := streams.ResultsStreams(ctx, r.JS)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var found *wire.Result
	var at time.Time
	for _, ref := range refs {
		res, t, err := r.scanStream(ctx, ref, streams.ResultsFilterIn(ref.P, subject), callID)
		if err != nil {
			return nil, err
		}
		if res != nil && (found == nil || !t.Before(at)) { // a replay's outcome in another partition (P changed) is the newest
			found, at = res, t
		}
	}
	return found, nil
}

// scanStream is callID's newest result on subject in one results stream,
// and when it was stored.
func (r Reader) scanStream(ctx context.Context, ref streams.ResultsStreamRef, subject, callID string) (*wire.Result, time.Time, error) {
	st, err := r.JS.Stream(ctx, ref.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("stream %s: %w", ref.Name, err)
	}
	var found *wire.Result
	var at time.Time
	seq := max(st.CachedInfo().State.FirstSeq, 1)
	for range MaxPerResponse {
		m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("results on %s: %w", subject, err)
		}
		seq = m.Sequence + 1
		if m.Header.Get(streams.HeaderCallID) != callID {
			continue
		}
		var res wire.Result
		if json.Unmarshal(m.Data, &res) != nil || res.CallID != callID {
			continue
		}
		found, at = &res, m.Time
	}
	return found, at, nil
}

// eachResult hands visit the results stored on subject (a filter of
// partition 0's form) in every results stream, partition 0's first, each
// stream's oldest first, at most limit of them per stream, until it
// returns false.
func (r Reader) eachResult(ctx context.Context, subject string, limit int, visit func(jetstream.Msg) bool) error {
	refs, err := streams.ResultsStreams(ctx, r.JS)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, ref := range refs {
		more, err := r.eachResultIn(ctx, ref.Name, streams.ResultsFilterIn(ref.P, subject), limit, visit)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// eachResultIn is eachResult in one stream; false once visit said stop.
func (r Reader) eachResultIn(ctx context.Context, stream, subject string, limit int, visit func(jetstream.Msg) bool) (bool, error) {
	st, err := r.JS.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("stream %s: %w", stream, err)
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}}
	if last := st.CachedInfo().State.LastSeq; subject == streams.ResultsAll() && last > uint64(limit) {
		// The whole stream: its newest limit messages.
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, last-uint64(limit)+1
	}
	c, err := st.OrderedConsumer(ctx, cfg)
	if err != nil {
		return false, fmt.Errorf("results on %s: %w", subject, err)
	}
	const batch = 256
	for read := 0; read < limit; {
		msgs, err := c.FetchNoWait(min(batch, limit-read))
		if err != nil {
			return false, fmt.Errorf("results on %s: %w", subject, err)
		}
		n := 0
		for m := range msgs.Messages() {
			n++
			if !visit(m) {
				return false, nil
			}
		}
		if err := msgs.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return false, fmt.Errorf("results on %s: %w", subject, err)
		}
		if n == 0 {
			return true, nil
		}
		read += n
	}
	return true, nil
}

// Subject is the results subject of the call callID names:
// toolgate.results.<tenant token>.<response id>. The tenant token comes back
// from the call id's tenant key (wire.TenantKey: the token with '=' for
// '~', so a hashed tenant's too); ok is false for what is not a call id.
func Subject(callID string) (string, bool) {
	rid, ok := responseOf(callID)
	if !ok {
		return "", false
	}
	tk, _ := wire.SplitCallID(callID)
	token := wire.NoTenant
	if tk != "" {
		token = tk
		if strings.HasPrefix(tk, "=") {
			token = "~" + tk[1:]
		}
	}
	return wire.ResultsPrefix + token + "." + rid, true
}

// responseOf is the response id callID names: what lies between its
// tenant key and its index.
func responseOf(callID string) (string, bool) {
	_, rest := wire.SplitCallID(callID)
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 || i == len(rest)-1 {
		return "", false
	}
	rid := rest[:i]
	if strings.ContainsAny(rid, ".*> ") {
		return "", false
	}
	return rid, true
}

// OfResult is the status record a result stands for (the result's record
// fields, pipeline.ResultIsRecord).
func OfResult(res wire.Result) pipeline.StatusRecord {
	return pipeline.StatusRecord{
		CallID: res.CallID, ResponseID: res.ResponseID, Tool: res.Tool, Provider: res.Provider, Model: res.Model,
		Source: res.Source, Status: res.Status, Failure: res.Failure, Errors: res.Errors, RepairAttempts: res.RepairAttempts,
		Replays: res.Replays, ToolRevision: res.ToolRevision, ArgumentsHash: res.ArgumentsHash,
		IdempotencyKey: res.IdempotencyKey, Identity: identityOr(res.Identity), History: res.History,
	}
}

func identityOr(s string) string {
	if s == "" {
		return "unverified"
	}
	return s
}

// List is the records of the calls whose results are stored (on subject,
// a results filter; "": all) and have no record in have, that pass keep
// (nil: all), oldest result first, at most limit results read. The list
// readers (calls ls, the console, whatif) add them to the bucket's records.
func (r Reader) List(ctx context.Context, subject string, limit int, have func(callID string) bool, keep func(pipeline.StatusRecord) bool) ([]pipeline.StatusRecord, error) {
	if subject == "" {
		subject = streams.ResultsAll()
	}
	var out []pipeline.StatusRecord
	at := map[string]int{}
	err := r.eachResult(ctx, subject, limit, func(m jetstream.Msg) bool {
		id := m.Headers().Get(streams.HeaderCallID)
		if id == "" || (have != nil && have(id)) {
			return true
		}
		var res wire.Result
		if json.Unmarshal(m.Data(), &res) != nil || res.CallID != id {
			return true
		}
		rec := OfResult(res)
		if keep != nil && !keep(rec) {
			return true
		}
		if i, ok := at[id]; ok {
			out[i] = rec // a later result of the call (replayed) is its outcome
			return true
		}
		at[id] = len(out)
		out = append(out, rec)
		return true
	})
	return out, err
}
