package httpingest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/wire"
)

// Outcomes is the answer to GET /v1/responses/{id}/outcomes.
type Outcomes struct {
	ResponseID string `json:"response_id"`
	// Complete: every outcome is here: a response-level one (the response
	// yielded no call, or was refused), or one per call the response
	// proposed (Expected), or as many as ?calls= asked for.
	Complete bool              `json:"complete"`
	Calls    int               `json:"calls"`              // distinct call outcomes so far
	Expected int               `json:"expected,omitempty"` // calls the response proposed, once an outcome said
	Outcomes []json.RawMessage `json:"outcomes"`
	// Dropped counts outcomes past the per-response limit, not kept.
	Dropped int `json:"dropped,omitempty"`
	// Waiting is the calls without an outcome that toolgate said wait: for
	// "approval" (a human decides with `toolgate approve|deny`), until its
	// expiry. Their outcomes come later, as any other.
	Waiting []Waiting `json:"waiting"`
}

// outcomes answers a long poll: the response's outcomes as soon as it is
// complete (from a toolgate whose results do not say how many calls a
// response has, and without ?calls=: as soon as there is any), else when
// ?wait= (bounded by MaxWait) has passed, with what there is, or 404 when
// nothing is known of it (unknown). It reads the caller's tenant's results
// subject only (wire.Results): another tenant's response is unknown here.
func (s *Server) outcomes(w http.ResponseWriter, r *http.Request) {
	c, ok := s.who(w, r)
	if !ok {
		return
	}
	rid := r.PathValue("id")
	if !producer.ValidResponseID(rid) {
		fail(w, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("response id %s: use 1 to 128 letters, digits, '-' and '_'", clip(rid)))
		return
	}
	wait, calls, err := s.pollParams(r)
	if err != nil {
		fail(w, http.StatusBadRequest, CodeBadRequest, err.Error())
		return
	}
	if _, ok := s.producerFor(c.tenant); !ok {
		s.tenantNotServed(w, c.tenant)
		return
	}
	// The tenant is the caller's (its token's where identity is verified),
	// so nobody reads another tenant's results.
	subject := wire.Results(c.tenant, rid)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		v, wt := s.cache.get(subject)
		done := v.complete(calls)
		if done || (calls == 0 && v.Expected == 0 && v.Calls > 0) {
			s.cache.release(subject, wt)
			writeJSON(w, http.StatusOK, answer(rid, v, done))
			return
		}
		select {
		case <-wt.ch:
			s.cache.release(subject, wt)
		case <-timer.C:
			s.cache.release(subject, wt)
			v := s.cache.peek(subject)
			if !v.Known {
				s.unknown(w, rid)
				return
			}
			writeJSON(w, http.StatusOK, answer(rid, v, v.complete(calls)))
			return
		case <-r.Context().Done():
			s.cache.release(subject, wt)
			return
		}
	}
}

// unknown answers 404 for a response id of which nothing is known: no
// outcome or notice came for it in the caller's tenant within Keep, nor did
// this ingest take it. Another tenant's id is the caller's unknown id: the
// same answer, after the same wait, so it tells nothing of other tenants.
func (s *Server) unknown(w http.ResponseWriter, rid string) {
	fail(w, http.StatusNotFound, CodeNotFound, fmt.Sprintf("response %s: unknown: nothing was published under this id (or its outcomes are older than %s, or are still to come): POST it first, or ask again with ?wait=", clip(rid), s.cfg.Keep))
}

func answer(rid string, v view, complete bool) Outcomes {
	out := Outcomes{ResponseID: rid, Complete: complete, Calls: v.Calls, Expected: v.Expected, Outcomes: v.Outcomes, Dropped: v.Dropped}
	if out.Outcomes == nil {
		out.Outcomes = []json.RawMessage{}
	}
	if out.Waiting = v.Waiting; out.Waiting == nil {
		out.Waiting = []Waiting{}
	}
	return out
}

// pollParams reads ?wait= (a duration such as 10s, or seconds; capped at
// MaxWait) and ?calls= (how many call outcomes make the response complete).
func (s *Server) pollParams(r *http.Request) (time.Duration, int, error) {
	q := r.URL.Query()
	var wait time.Duration
	if v := q.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			n, nerr := strconv.ParseFloat(v, 64)
			if nerr != nil || n != n || n < 0 { // n != n: NaN
				return 0, 0, fmt.Errorf("wait %s: want a duration such as 10s", clip(v))
			}
			d = s.cfg.MaxWait
			if n < s.cfg.MaxWait.Seconds() {
				d = time.Duration(n * float64(time.Second))
			}
		}
		if d < 0 {
			return 0, 0, fmt.Errorf("wait %s: want 0 or more", clip(v))
		}
		wait = min(d, s.cfg.MaxWait)
	}
	calls := 0
	if v := q.Get("calls"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > s.cfg.MaxOutcomes {
			return 0, 0, fmt.Errorf("calls %s: want a number of calls from 0 to %d", clip(v), s.cfg.MaxOutcomes)
		}
		calls = n
	}
	return wait, calls, nil
}
