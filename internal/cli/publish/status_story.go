package publish

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/inflight"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/records"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// story is one call's whole story as `status --json` prints it: its status
// record, what it waits for now, and its terminal result once there is one.
type story struct {
	Record  pipeline.StatusRecord `json:"status"`
	Waiting *pipeline.Wait        `json:"waiting,omitempty"`
	Result  *pipeline.Result      `json:"result,omitempty"`
}

// reader reads what toolgate keeps about calls and responses, for status
// and results. Every error it returns is explained (explainNATS).
type reader struct {
	ctx context.Context
	js  jetstream.JetStream
	now func() time.Time
	// idle is the accumulate stage's stream idle timeout, for the end of an
	// open stream.
	idle time.Duration
}

// record is the status record of callID: the stored one, or for a call
// that ended without one its result, or for a call in flight what its hop
// in the gate streams says (records.Reader.Find); nil when there is none.
func (rd *reader) record(callID string) (*pipeline.StatusRecord, error) {
	r, err := records.Reader{JS: rd.js}.Find(rd.ctx, callID)
	if err != nil {
		if errors.Is(err, records.ErrMalformedStatus) {
			return nil, fmt.Errorf("status: %w (toolgate did not write it as it stands)", err)
		}
		return nil, cmdutil.ExplainNATS(err, "call "+callID)
	}
	return r, nil
}

// stored is the status record of callID in the calls bucket; nil when
// there is none.
func (rd *reader) stored(callID string) (*pipeline.StatusRecord, error) {
	r, err := records.Reader{JS: rd.js}.Stored(rd.ctx, callID)
	if errors.Is(err, records.ErrMalformedStatus) {
		return nil, fmt.Errorf("status: %w (toolgate did not write it as it stands)", err)
	}
	if err != nil {
		return nil, cmdutil.ExplainNATS(err, "call "+callID)
	}
	return r, nil
}

// callsOf is the status records of responseID's calls, found by their ids
// (call.ID of the response's key: <response-id>-<index> for no tenant,
// <tenant>=<response-id>-<index> for a tenant, as results name them) from
// index 0 up to the first missing one, plus the calls named by results whose
// record is gone. A tenant's response with no result yet is found by its
// call ids only (toolgate status CALL-ID).
func (rd *reader) callsOf(responseID string, results []pipeline.Result) ([]pipeline.StatusRecord, error) {
	var out []pipeline.StatusRecord
	seen := map[string]bool{}
	keys := []string{responseID}
	for _, res := range results {
		if k := responseKeyOf(res.CallID, responseID); k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	ended := map[string]pipeline.Result{}
	for _, res := range results {
		ended[res.CallID] = res // the newest of a call's results last
	}
	for _, key := range keys {
		for i := 0; ; i++ {
			id := call.ID(key, i)
			r, err := rd.stored(id)
			if err != nil {
				return nil, err
			}
			if res, ok := ended[id]; ok && records.Supersedes(res, r) {
				// A call that ended without a record (issue 30): its
				// result is its record, and the next index is looked up.
				rec := records.OfResult(res)
				r = &rec
			}
			if r == nil {
				break
			}
			seen[r.CallID] = true
			out = append(out, *r)
		}
	}
	// The calls in flight, which have no record yet (issue 30).
	moving, err := inflight.List(rd.ctx, rd.js, 0, func(r pipeline.StatusRecord) bool { return r.ResponseID == responseID && !seen[r.CallID] })
	if err != nil {
		return nil, cmdutil.ExplainNATS(err, "calls of "+responseID+" in flight")
	}
	for _, r := range moving {
		seen[r.CallID] = true
		out = append(out, r)
	}
	for _, res := range results {
		if seen[res.CallID] {
			continue
		}
		seen[res.CallID] = true
		r, err := rd.stored(res.CallID)
		if err != nil {
			return nil, err
		}
		if r == nil { // none written (issue 30), or aged out before the result: the result tells it
			rec := records.OfResult(ended[res.CallID])
			r = &rec
		}
		out = append(out, *r)
	}
	return out, nil
}

// waiting is what r waits for: the wait its stage recorded, or, for a call
// waiting for a human decision whose stage wrote none, the approval
// record's expiry and reason.
func (rd *reader) waiting(r pipeline.StatusRecord) (*pipeline.Wait, error) {
	if r.Waiting != nil || r.Status != call.ApprovalRequired {
		return r.Waiting, nil
	}
	kv, err := rd.js.KeyValue(rd.ctx, streams.BucketApprovals)
	if err != nil {
		return nil, cmdutil.ExplainNATS(err, "bucket "+streams.BucketApprovals)
	}
	a, _, err := approval.NewStore(kv).Get(rd.ctx, r.CallID)
	switch {
	case errors.Is(err, approval.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, cmdutil.ExplainNATS(err, "approval of "+r.CallID)
	case a.State != approval.Pending:
		// Decided; the policy gate has yet to move the call on.
		return &pipeline.Wait{Stage: streams.Policy, For: pipeline.WaitApproval, Detail: fmt.Sprintf("%s; the policy stage resumes the call", a.Note()), Since: a.DecidedAt}, nil
	}
	return &pipeline.Wait{Stage: streams.Policy, For: pipeline.WaitApproval, Detail: a.Why, Since: a.RequestedAt, Until: a.ExpiresAt}, nil
}

// storyOf gathers the story of the call r among its response's results.
func (rd *reader) storyOf(r pipeline.StatusRecord, results []pipeline.Result) (story, error) {
	s := story{Record: r}
	for i := range results {
		if results[i].CallID == r.CallID {
			s.Result = &results[i] // the last one wins: a replayed call ends again
		}
	}
	if s.Result == nil && !r.Status.Terminal() {
		w, err := rd.waiting(r)
		if err != nil {
			return story{}, err
		}
		s.Waiting = w
	}
	return s, nil
}

// responseKeyOf is the response key (call.Key) call id callID of response
// responseID is made of: all before its last '-', when that ends in the
// response id; "" otherwise.
func responseKeyOf(callID, responseID string) string {
	i := strings.LastIndexByte(callID, '-')
	if i < 0 || !strings.HasSuffix(callID[:i], responseID) {
		return ""
	}
	return callID[:i]
}
