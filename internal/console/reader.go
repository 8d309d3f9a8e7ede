package console

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/internal/inflight"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/records"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// maxScan bounds the records one page reads from a bucket or stream: a
// page answers in bounded time whatever the deployment holds.
const maxScan = 20000

func (s *Server) timeout(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, 10*time.Second)
}

// record is the status record of callID: the stored one, or for a call
// that ended without one its result, or for a call in flight what its hop
// says (records.Reader.Find); nil when there is none.
func (s *Server) record(ctx context.Context, callID string) (*pipeline.StatusRecord, error) {
	return records.Reader{JS: s.cfg.JS, Limit: maxScan}.Find(ctx, callID)
}

// scanCalls reads the status records that pass keep, newest update first,
// at most limit of them.
func (s *Server) scanCalls(ctx context.Context, keep func(pipeline.StatusRecord) bool, limit int) ([]pipeline.StatusRecord, int, error) {
	kv, err := s.cfg.JS.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		return nil, 0, fmt.Errorf("bucket %s: %w", streams.BucketCalls, err)
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, 0, fmt.Errorf("bucket %s: %w", streams.BucketCalls, err)
	}
	defer w.Stop()
	var out []pipeline.StatusRecord
	bad := 0
	for seen := 0; seen < maxScan; seen++ {
		var e jetstream.KeyValueEntry
		select {
		case e = <-w.Updates():
		case <-ctx.Done():
			return nil, bad, ctx.Err()
		}
		if e == nil {
			break
		}
		r, err := dlq.DecodeStatus(e.Key(), e.Value())
		if err != nil {
			bad++
			continue
		}
		if keep(r) {
			out = append(out, r)
		}
	}
	// The calls in flight have no record until they wait or end (issue 30).
	have := map[string]bool{}
	for _, r := range out {
		have[r.CallID] = true
	}
	// The calls that ended without a record (issue 30): their results are
	// their records.
	ended, err := records.Reader{JS: s.cfg.JS}.List(ctx, "", maxScan, func(id string) bool { return have[id] }, keep)
	if err != nil {
		s.cfg.Log.Warn().Err(err).Msg("console: the results not read")
	}
	for _, r := range ended {
		have[r.CallID] = true
	}
	out = append(out, ended...)
	// A console user granted before issue 30 may not read the hops: the
	// page still lists the calls that have a record.
	moving, err := inflight.List(ctx, s.cfg.JS, maxScan, func(r pipeline.StatusRecord) bool { return !have[r.CallID] && keep(r) })
	if err != nil {
		s.cfg.Log.Warn().Err(err).Msg("console: the calls in flight not read")
	}
	out = append(out, moving...)
	sort.SliceStable(out, func(i, j int) bool { return updated(out[i]).After(updated(out[j])) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, bad, nil
}

func updated(r pipeline.StatusRecord) time.Time {
	if n := len(r.History); n > 0 {
		return r.History[n-1].At
	}
	return time.Time{}
}

// results reads the stored results of responseID, in every results
// stream, each stream's oldest first.
func (s *Server) results(ctx context.Context, responseID string) ([]pipeline.Result, error) {
	refs, err := streams.ResultsStreams(ctx, s.cfg.JS)
	if err != nil {
		return nil, err
	}
	var out []pipeline.Result
	for _, ref := range refs {
		rs, err := s.resultsIn(ctx, ref, responseID)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

// resultsIn reads the stored results of responseID in one results stream,
// oldest first.
func (s *Server) resultsIn(ctx context.Context, ref streams.ResultsStreamRef, responseID string) ([]pipeline.Result, error) {
	st, err := s.cfg.JS.Stream(ctx, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", ref.Name, err)
	}
	c, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{streams.ResultsOfIn(ref.P, responseID)}})
	if err != nil {
		return nil, fmt.Errorf("results of %s: %w", responseID, err)
	}
	var out []pipeline.Result
	for range maxScan / 256 {
		batch, err := c.FetchNoWait(256)
		if err != nil {
			return nil, err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			var r pipeline.Result
			if json.Unmarshal(m.Data(), &r) == nil && r.CallID != "" {
				out = append(out, r)
			}
		}
		if n == 0 {
			break
		}
	}
	return out, nil
}

// tenantResponses is the response ids with a result stored for tenant, in
// every results stream.
func (s *Server) tenantResponses(ctx context.Context, tenant string) (map[string]bool, error) {
	refs, err := streams.ResultsStreams(ctx, s.cfg.JS)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, ref := range refs {
		st, err := s.cfg.JS.Stream(ctx, ref.Name)
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", ref.Name, err)
		}
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(wire.TenantResults(tenant)))
		if err != nil {
			return nil, err
		}
		for subj := range info.State.Subjects {
			out[wire.ResultsResponseID(subj)] = true
		}
	}
	return out, nil
}
