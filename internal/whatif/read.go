package whatif

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/ingest"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/records"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// Source is where the recorded calls of a window are read: the status
// records of the calls bucket (their fate) and the provider input kept in
// TOOLGATE_IN (their arguments as the gates saw them, and the request).
// The records are read with an ordered consumer, the input a message at a
// time by sequence: what is held is one small Recorded per call of the
// window.
type Source struct {
	JS    jetstream.JetStream
	Since time.Time
	// Tool: only the calls of this tool (as status records name it); ""
	// all.
	Tool string
	// Progress, when set, is told now and then how far the input read has
	// got: stream sequences passed, sequences in the window.
	Progress func(read, total uint64)
	// MaxCalls bounds the status records of the window held (0: no
	// bound); past it the rest are counted as SkipCut (the console's
	// what-if bounds what one request may make it hold).
	MaxCalls int
}

// idle bounds the wait for the next message of a stream known to hold
// more: a consumer that stalls this long is an error, not an empty window.
const idle = 30 * time.Second

// Run reads the window's recorded calls, re-evaluates each with ev and
// reports every call of the window: compared, or counted as not
// re-evaluated and why.
func Run(ctx context.Context, src Source, ev *Evaluator) (*Report, error) {
	rep := NewReport()
	recs, err := src.records(ctx, rep)
	if err != nil {
		return nil, err
	}
	// TOOLGATE_IN and its partitions (streams/in_partitions.go: a
	// tenant's batch responses are there with P > 1).
	names, err := streams.AllInStreams(ctx, src.JS)
	if err != nil {
		return nil, fmt.Errorf("whatif: %w", err)
	}
	ins := make([]jetstream.Stream, 0, len(names))
	for _, name := range names {
		in, err := src.JS.Stream(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("whatif: read %s: %w", name, err)
		}
		ins = append(ins, in)
	}
	w := window{ev: ev, rep: rep, recs: recs, tool: src.Tool}
	input := func(m *jetstream.RawStreamMsg) {
		w.input(ctx, m.Header, m.Data, m.Sequence, m.Time.Before(src.Since))
	}
	kept := time.Now()
	for i, in := range ins {
		at, err := src.inputs(ctx, in, input, i == 0)
		if err != nil {
			return nil, err
		}
		if at.Before(kept) {
			kept = at
		}
	}
	// A tenant's whole responses on their claimed subjects (issue 30),
	// kept for the claim period: the older of the two streams' first
	// messages is how far back inputs reach.
	if keptClaimed, ok, err := src.claimedInputs(ctx, input); err != nil {
		return nil, err
	} else if ok && keptClaimed.Before(kept) {
		kept = keptClaimed
	}
	w.finish()
	for _, rec := range recs {
		if rec.done {
			continue
		}
		if rec.Recovered {
			rep.Skip(rec.Tool, SkipRecovered)
			continue
		}
		if rec.CreatedAt.Before(kept) {
			rep.Skip(rec.Tool, SkipAgedOut)
			continue
		}
		// Not among the whole responses although the stream still
		// reaches back that far: the events of a streamed one, or an
		// input deleted.
		streamed, err := streamedIn(ctx, ins, rec.ResponseID)
		switch {
		case err != nil:
			return nil, err
		case streamed:
			rep.Skip(rec.Tool, SkipStreamed)
		default:
			rep.Skip(rec.Tool, SkipAgedOut)
		}
	}
	return rep, nil
}

// streamedIn reports whether ins hold an event of the shared stream rid,
// unsuffixed or in a partition.
func streamedIn(ctx context.Context, ins []jetstream.Stream, rid string) (bool, error) {
	for _, in := range ins {
		for _, subj := range []string{streams.InStream(rid), streams.InStream(rid) + ".*"} {
			_, err := in.GetLastMsgForSubject(ctx, subj)
			switch {
			case err == nil:
				return true, nil
			case !errors.Is(err, jetstream.ErrMsgNotFound):
				return false, fmt.Errorf("whatif: read %s: %w", in.CachedInfo().Config.Name, err)
			}
		}
	}
	return false, nil
}

// inputs hands f every whole response (toolgate.in.response, a tenant's
// .response and .batch) in, TOOLGATE_IN (zero) or one of its partition
// streams, holds from slack before src.Since, in order, one message get at
// a time: it needs no consumer, so a reader cannot take work from
// accumulate's. kept is the time of the oldest message the stream holds:
// calls made before it have aged out.
func (src Source) inputs(ctx context.Context, in jetstream.Stream, f func(*jetstream.RawStreamMsg), zero bool) (kept time.Time, err error) {
	info, err := in.Info(ctx)
	if err != nil {
		return kept, fmt.Errorf("whatif: read %s: %w", in.CachedInfo().Config.Name, err)
	}
	first, last := info.State.FirstSeq, info.State.LastSeq
	if info.State.Msgs == 0 {
		return time.Now(), nil
	}
	kept = info.State.FirstTime
	// The shared subject, then every tenant's own (wire.InTenantResponse
	// and its batch subject, wire.InTenantBatch, with P > 1 stored with a
	// partition), whose tenant is the subject's (as accumulate takes it).
	subjects := []string{streams.InTenantBatches() + ".*"}
	if zero {
		subjects = append([]string{streams.SubjectInResponse, streams.InTenantResponses(), streams.InTenantBatches()}, subjects...)
	}
	for _, subject := range subjects {
		if err := src.inputsOn(ctx, in, subject, first, last, func(m *jetstream.RawStreamMsg) {
			if tok, _, ok := wire.SplitInTenant(m.Subject); ok && m.Header.Get(streams.HeaderTenant) == "" {
				m.Header.Set(streams.HeaderTenant, tok)
			}
			f(m)
		}); err != nil {
			return kept, err
		}
	}
	return kept, nil
}

// claimedInputs hands f every whole response TOOLGATE_RESPONSES and its
// partition streams (streams/claimed_partitions.go) hold from slack before
// src.Since (accumulate's claim messages, headers only, are no input), with
// its tenant from the subject as accumulate takes it, and returns the time
// of their oldest message; ok is false when they hold none, or do not
// exist (a deployment of before).
func (src Source) claimedInputs(ctx context.Context, f func(*jetstream.RawStreamMsg)) (kept time.Time, ok bool, err error) {
	names, err := streams.AllResponsesStreams(ctx, src.JS)
	if err != nil {
		return kept, false, fmt.Errorf("whatif: %w", err)
	}
	for _, name := range names {
		at, some, err := src.claimedInputsOf(ctx, name, f)
		if err != nil {
			return kept, ok, err
		}
		if some && (!ok || at.Before(kept)) {
			kept = at
		}
		ok = ok || some
	}
	return kept, ok, nil
}

// claimedInputsOf is claimedInputs of one claimed stream, name.
func (src Source) claimedInputsOf(ctx context.Context, name string, f func(*jetstream.RawStreamMsg)) (kept time.Time, ok bool, err error) {
	st, err := src.JS.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return kept, false, nil
	}
	if err != nil {
		return kept, false, fmt.Errorf("whatif: read %s: %w", name, err)
	}
	info := st.CachedInfo()
	if info.State.Msgs == 0 {
		return kept, false, nil
	}
	err = src.inputsOn(ctx, st, wire.InTenantPrefix+">", info.State.FirstSeq, info.State.LastSeq, func(m *jetstream.RawStreamMsg) {
		if m.Header.Get(ingest.HeaderClaimKind) != "" {
			return
		}
		if tok, _, ok := wire.SplitInTenant(m.Subject); ok && m.Header.Get(streams.HeaderTenant) == "" {
			m.Header.Set(streams.HeaderTenant, tok)
		}
		f(m)
	})
	return info.State.FirstTime, true, err
}

// inputsOn hands f every message on subject (a filter) that in holds
// between first and last, from slack before src.Since, in order.
func (src Source) inputsOn(ctx context.Context, in jetstream.Stream, subject string, first, last uint64, f func(*jetstream.RawStreamMsg)) error {
	get := func(seq uint64) (*jetstream.RawStreamMsg, error) {
		m, err := in.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("whatif: read %s at %d: %w", in.CachedInfo().Config.Name, seq, err)
		}
		return m, nil
	}
	// The first whole response at or after Since: a binary search on the
	// sequence, the stream being in time order.
	lo, hi := first, last+1
	for lo < hi {
		mid := lo + (hi-lo)/2
		m, err := get(mid)
		if err != nil {
			return err
		}
		if m == nil || !m.Time.Before(src.Since.Add(-slack)) {
			hi = mid
		} else {
			lo = m.Sequence + 1
		}
	}
	var read uint64
	for seq := lo; seq <= last; {
		m, err := get(seq)
		if err != nil {
			return err
		}
		if m == nil || m.Sequence > last {
			break
		}
		read++
		f(m)
		seq = m.Sequence + 1
		if src.Progress != nil && (read%1000 == 0 || seq > last) {
			src.Progress(seq-lo, last+1-lo)
		}
	}
	return nil
}

// window is the re-evaluation of one window: the records of its calls,
// and the report they go into.
type window struct {
	ev   *Evaluator
	rep  *Report
	recs map[string]*Recorded
	tool string
	// metered are the calls held for the limits (limits.go), one small
	// entry per call the new definitions would run under a limit.
	metered []metered
}

// slack is how far before the window the input is read: a response
// published just before it may have become calls inside it.
const slack = time.Minute

// input re-evaluates the calls of one whole response stored in TOOLGATE_IN
// and compares each with its record. before: the response was published
// before the window, so a call without a record in it is not counted.
func (w *window) input(ctx context.Context, h nats.Header, data []byte, seq uint64, before bool) {
	envs, err := Envelopes(h, data, seq)
	if err != nil {
		return // accumulate refused it too: it made no calls
	}
	// Roles from headers count only where accumulate granted them: a
	// producer the deployment lets assert them (its records say asserted);
	// anyone else's claimed roles were granted none (issue 28).
	granted := false
	for _, e := range envs {
		for _, id := range []string{e.CallID, strings.TrimSuffix(e.CallID, "-text") + "-0"} {
			if rec, ok := w.recs[id]; ok && rec.Asserted {
				granted = true
			}
		}
	}
	if !granted {
		for i := range envs {
			envs[i].Request.Roles = nil
		}
	}
	for _, e := range envs {
		for _, out := range w.ev.Evaluate(ctx, e) {
			rec, ok := w.recs[out.CallID]
			if !ok {
				if !before && (w.tool == "" || w.tool == out.ToolName) {
					w.rep.Skip(publicName(w.ev, out.ToolName), SkipNoRecord)
				}
				continue
			}
			if rec.done {
				continue // the same input stored twice
			}
			rec.done = true
			w.compare(rec, out)
		}
	}
}

// compare adds rec, re-evaluated as out, to the report; a call its new
// definitions would run under a limit is held for finish.
func (w *window) compare(rec *Recorded, out call.Envelope) {
	rep := w.rep
	switch {
	case rec.Verified:
		rep.Skip(rec.Tool, SkipToken)
	case rec.Fate.Kind == Other && !rec.Status.Terminal():
		rep.Skip(rec.Tool, SkipInFlight)
	case rec.Fate.Kind == Other:
		rep.Skip(rec.Tool, SkipOtherEnded)
	case w.meter(rec, out):
	default:
		rep.Add(rec.Tool, rec.CallID, rec.Fate, rec.Status, FateOf(out))
	}
}

// publicName is name as status records show it: a name the definitions do
// not register is not printed.
func publicName(ev *Evaluator, name string) string {
	if ev.Registered(name) {
		return name
	}
	return "(unregistered)"
}

// records reads the window's status records: the latest of each call,
// through a watch of the bucket (an ordered push consumer with flow
// control, what a console may make). A record that is not one is counted
// in rep and left out.
func (src Source) records(ctx context.Context, rep *Report) (map[string]*Recorded, error) {
	recs := map[string]*Recorded{}
	kv, err := src.JS.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		return nil, fmt.Errorf("whatif: read %s: %w", streams.BucketCalls, err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := kv.WatchAll(wctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("whatif: read %s: %w", streams.BucketCalls, err)
	}
	defer w.Stop()
	t := time.NewTimer(idle)
	defer t.Stop()
	for n := 0; ; n++ {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("whatif: read %s: the watch ended after %d records", streams.BucketCalls, n)
			}
			if e == nil { // every record there was
				return recs, src.ended(ctx, rep, recs)
			}
			src.record(rep, recs, e.Key(), e.Operation(), e.Value())
			t.Reset(idle)
		case <-t.C:
			return nil, fmt.Errorf("whatif: read %s: no record for %s after %d", streams.BucketCalls, idle, n)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// MaxResults bounds the results read for the calls that ended without a
// status record: the newest of the results stream.
const MaxResults = 200000

// ended adds to recs the calls of the window that ended without a status
// record (issue 30): their results are their records.
func (src Source) ended(ctx context.Context, rep *Report, recs map[string]*Recorded) error {
	have := func(id string) bool { _, ok := recs[id]; return ok }
	list, err := records.Reader{JS: src.JS}.List(ctx, "", MaxResults, have, nil)
	if err != nil {
		return fmt.Errorf("whatif: read %s: %w", streams.StreamResults, err)
	}
	for _, r := range list {
		data, err := json.Marshal(r)
		if err != nil {
			continue
		}
		src.record(rep, recs, r.CallID, jetstream.KeyValuePut, data)
	}
	return nil
}

// record adds the status record of key to recs when it is of the window
// (and the tool); op is the KV operation (DEL and PURGE hold none).
func (src Source) record(rep *Report, recs map[string]*Recorded, key string, op jetstream.KeyValueOp, data []byte) {
	if op != jetstream.KeyValuePut {
		return
	}
	rec, err := DecodeRecord(data)
	if err != nil {
		rep.Skip("", SkipBadRecord)
		rep.BadExample("status record " + key)
		return
	}
	if rec.CreatedAt.Before(src.Since) || (src.Tool != "" && rec.Tool != src.Tool) {
		return
	}
	if _, seen := recs[rec.CallID]; !seen && src.MaxCalls > 0 && len(recs) >= src.MaxCalls {
		rep.Skip(rec.Tool, SkipCut)
		return
	}
	recs[rec.CallID] = &rec
}

// Envelopes are the calls accumulate made of a whole response stored in
// TOOLGATE_IN (headers h, body data, stream sequence seq), as Received
// envelopes under the request its headers carried.
func Envelopes(h nats.Header, data []byte, seq uint64) ([]call.Envelope, error) {
	prov := h.Get(streams.HeaderProvider)
	if !provider.Known(prov) {
		return nil, fmt.Errorf("whatif: unknown provider %q", prov)
	}
	var opts []provider.Option
	if n, err := strconv.Atoi(h.Get(streams.HeaderMaxTokens)); err == nil && n > 0 {
		opts = append(opts, provider.WithMaxTokens(n))
	}
	resp, err := provider.ParseResponse(prov, data, opts...)
	if err != nil {
		return nil, fmt.Errorf("whatif: %w", err)
	}
	rid := ingest.ResponseIDOf(h, seq)
	req := ingest.RequestOf(h)
	// A tenant's calls are keyed by tenant and response id (ingest.keyed,
	// issue 28): the ids of its status records.
	key := wire.ResponseKey(req.Tenant, rid)
	model := h.Get(streams.HeaderModel)
	if model == "" {
		model = resp.Model
	}
	atomic := strings.EqualFold(h.Get(streams.HeaderAtomic), "true")
	var envs []call.Envelope
	for _, c := range resp.Calls {
		e := call.New(rid, c.Index, time.Now())
		e.Provider, e.Model, e.Request = resp.Provider, model, req
		e.ProviderCallID, e.ToolName, e.RawArguments, e.ProviderKind = c.ID, c.Name, c.Arguments, c.Kind
		e.FinishReason, e.ProviderFinish = string(resp.Finish), resp.ProviderFinish
		e.Batch = call.Batch{ID: key, Index: c.Index, Size: len(resp.Calls), Atomic: atomic}
		e.CallID = call.ID(key, c.Index)
		if c.Truncated {
			e.TruncatedHint = c.TruncatedWhy
		}
		envs = append(envs, e)
	}
	if len(envs) == 0 && req.Tolerant && (resp.Error == nil || !resp.Error.Withheld) {
		// Calls recovered from the assistant's text, as accumulate makes
		// the carrier (a provider made tolerant by --tolerant-providers
		// rather than by the header is not known here).
		text := resp.Text
		if resp.Error != nil && resp.Error.FailedGeneration != "" {
			text = resp.Error.FailedGeneration
		}
		if strings.TrimSpace(text) != "" {
			e := call.New(rid, 0, time.Now())
			e.CallID = key + "-text"
			e.Batch.ID = key
			e.Provider, e.Model, e.Request = resp.Provider, model, req
			e.FinishReason, e.ProviderFinish = string(resp.Finish), resp.ProviderFinish
			e.Carrier, e.Text, e.Source = true, text, call.SourceTextJSON
			e.TruncatedHint = ingest.CapHint(resp)
			e.Batch.Atomic = atomic
			envs = append(envs, e)
		}
	}
	return envs, nil
}
