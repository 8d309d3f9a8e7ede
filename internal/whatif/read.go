package whatif

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/provider"
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
	in, err := src.JS.Stream(ctx, streams.StreamIn)
	if err != nil {
		return nil, fmt.Errorf("whatif: read %s: %w", streams.StreamIn, err)
	}
	err = src.inputs(ctx, in, func(m *jetstream.RawStreamMsg) {
		envs, err := Envelopes(m.Header, m.Data, m.Sequence)
		if err != nil {
			return // accumulate refused it too: it made no calls
		}
		for _, e := range envs {
			for _, out := range ev.Evaluate(ctx, e) {
				rec, ok := recs[out.CallID]
				if !ok {
					if src.Tool == "" || src.Tool == out.ToolName {
						rep.Skip(publicName(ev, out.ToolName), SkipNoRecord)
					}
					continue
				}
				if rec.done {
					continue // the same input stored twice
				}
				rec.done = true
				compare(rep, rec, out)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		if rec.done {
			continue
		}
		// Not among the whole responses: the events of a streamed one,
		// or nothing any more.
		if _, err := in.GetLastMsgForSubject(ctx, streams.InStream(rec.ResponseID)); err == nil {
			rep.Skip(rec.Tool, SkipStreamed)
		} else {
			rep.Skip(rec.Tool, SkipAgedOut)
		}
	}
	return rep, nil
}

// inputs hands f every whole response (toolgate.in.response) TOOLGATE_IN
// holds from src.Since, in order, one message get at a time: it needs no
// consumer, so a reader cannot take work from accumulate's.
func (src Source) inputs(ctx context.Context, in jetstream.Stream, f func(*jetstream.RawStreamMsg)) error {
	info, err := in.Info(ctx)
	if err != nil {
		return fmt.Errorf("whatif: read %s: %w", streams.StreamIn, err)
	}
	first, last := info.State.FirstSeq, info.State.LastSeq
	if info.State.Msgs == 0 {
		return nil
	}
	get := func(seq uint64) (*jetstream.RawStreamMsg, error) {
		m, err := in.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(streams.SubjectInResponse))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("whatif: read %s at %d: %w", streams.StreamIn, seq, err)
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
		if m == nil || !m.Time.Before(src.Since) {
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

// compare adds rec, re-evaluated as out, to rep.
func compare(rep *Report, rec *Recorded, out call.Envelope) {
	switch {
	case rec.Verified:
		rep.Skip(rec.Tool, SkipToken)
	case rec.Fate.Kind == Other:
		rep.Skip(rec.Tool, SkipOtherEnded)
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
// through an ordered consumer (the watch a console may make). A record
// that is not one is counted in rep and left out.
func (src Source) records(ctx context.Context, rep *Report) (map[string]*Recorded, error) {
	recs := map[string]*Recorded{}
	name := "KV_" + streams.BucketCalls
	st, err := src.JS.Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("whatif: read %s: %w", name, err)
	}
	if st.CachedInfo().State.Msgs == 0 {
		return recs, nil
	}
	cons, err := src.JS.OrderedConsumer(ctx, name, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy})
	if err != nil {
		return nil, fmt.Errorf("whatif: read %s: %w", name, err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(256))
	if err != nil {
		return nil, fmt.Errorf("whatif: read %s: %w", name, err)
	}
	defer it.Stop()
	prefix := "$KV." + streams.BucketCalls + "."
	for n := 0; ; n++ {
		m, err := nextMsg(ctx, it)
		if err != nil {
			return nil, fmt.Errorf("whatif: read %s after %d records: %w", name, n, err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return nil, fmt.Errorf("whatif: read %s: %w", name, err)
		}
		src.record(rep, recs, strings.TrimPrefix(m.Subject(), prefix), m.Headers().Get("KV-Operation"), m.Data())
		if meta.NumPending == 0 {
			return recs, nil
		}
	}
}

// record adds the status record of key to recs when it is of the window
// (and the tool); op is the KV operation (DEL and PURGE hold none).
func (src Source) record(rep *Report, recs map[string]*Recorded, key, op string, data []byte) {
	if op == "DEL" || op == "PURGE" {
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
	recs[rec.CallID] = &rec
}

// nextMsg is the iterator's next message, or an error when none comes for
// idle or ctx ends.
func nextMsg(ctx context.Context, it jetstream.MessagesContext) (jetstream.Msg, error) {
	type got struct {
		m   jetstream.Msg
		err error
	}
	ch := make(chan got, 1)
	go func() { m, err := it.Next(); ch <- got{m, err} }()
	t := time.NewTimer(idle)
	defer t.Stop()
	select {
	case g := <-ch:
		return g.m, g.err
	case <-t.C:
		it.Stop()
		return nil, errors.New("no message for " + idle.String())
	case <-ctx.Done():
		it.Stop()
		return nil, ctx.Err()
	}
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
	rid := responseID(h, seq)
	req := request(h)
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
		e.Batch = call.Batch{ID: rid, Index: c.Index, Size: len(resp.Calls), Atomic: atomic}
		if c.Truncated {
			e.TruncatedHint = c.TruncatedWhy
		}
		envs = append(envs, e)
	}
	return envs, nil
}

// responseID is accumulate's response id of the input (ingest.responseID).
func responseID(h nats.Header, seq uint64) string {
	id := h.Get(streams.HeaderResponseID)
	if id == "" {
		id = h.Get(nats.MsgIdHdr)
	}
	if id == "" {
		return fmt.Sprintf("seq%d", seq)
	}
	return call.SafeResponseID(id)
}

// request is the request context of the headers, as accumulate reads it
// without an identity issuer (calls with a verified identity are not
// re-evaluated: their roles came from a token).
func request(h nats.Header) call.Request {
	r := call.Request{
		Tenant:       h.Get(streams.HeaderTenant),
		Principal:    h.Get(streams.HeaderPrincipal),
		Conversation: h.Get(streams.HeaderConversation),
		Tolerant:     strings.EqualFold(h.Get(streams.HeaderTolerant), "true"),
		DryRun:       strings.EqualFold(h.Get(streams.HeaderDryRun), "true"),
	}
	for _, role := range strings.Split(h.Get(streams.HeaderRoles), ",") {
		if role = strings.TrimSpace(role); role != "" {
			r.Roles = append(r.Roles, role)
		}
	}
	return r
}
