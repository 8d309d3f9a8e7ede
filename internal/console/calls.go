package console

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
)

// callQuery is the calls search form; a zero field matches everything.
type callQuery struct {
	Response, Call, Tool, Status, Tenant, Since string
	since                                       time.Time
	tenantRIDs                                  map[string]bool
}

// searchLimit is how many calls the search shows, newest first.
const searchLimit = 200

func (q callQuery) match(r pipeline.StatusRecord) bool {
	switch {
	case q.Response != "" && r.ResponseID != q.Response,
		q.Call != "" && r.CallID != q.Call,
		q.Tool != "" && r.Tool != q.Tool,
		q.Status != "" && string(r.Status) != q.Status && string(r.Failure) != q.Status,
		!q.since.IsZero() && updated(r).Before(q.since),
		q.tenantRIDs != nil && !q.tenantRIDs[r.ResponseID]:
		return false
	}
	return true
}

// parseSince reads a duration back from now (1h, 15m) or a local time
// (2026-12-01T15:04, as a datetime-local input sends it, or RFC 3339).
func parseSince(s string, now time.Time) (time.Time, bool) {
	if s == "" {
		return time.Time{}, true
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), true
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

type callsView struct {
	Q        callQuery
	Rows     []pipeline.StatusRecord
	More     bool
	Bad      int
	Statuses []string
	Searched bool
}

func (s *Server) callsPage(w http.ResponseWriter, r *http.Request) {
	qv := r.URL.Query()
	q := callQuery{Response: qv.Get("response"), Call: qv.Get("call"), Tool: qv.Get("tool"), Status: qv.Get("status"), Tenant: qv.Get("tenant"), Since: qv.Get("since")}
	v := callsView{Q: q}
	for _, st := range call.Statuses() {
		v.Statuses = append(v.Statuses, string(st))
	}
	slices.Sort(v.Statuses)
	for _, f := range []string{q.Response, q.Call, q.Tool, q.Status, q.Tenant, q.Since} {
		if len(f) > 200 {
			s.fail(w, r, http.StatusBadRequest, "a search field is longer than 200 characters")
			return
		}
	}
	since, ok := parseSince(strings.TrimSpace(q.Since), s.cfg.Now())
	if !ok {
		s.fail(w, r, http.StatusBadRequest, "since: want a duration (1h, 15m) or a time (2026-12-01T15:04)")
		return
	}
	q.since = since
	ctx, cancel := s.timeout(r.Context())
	defer cancel()
	if q.Tenant != "" {
		rids, err := s.tenantResponses(ctx, q.Tenant)
		if err != nil {
			s.fail(w, r, http.StatusBadGateway, "calls: "+shortErr(err))
			return
		}
		q.tenantRIDs = rids
	}
	rows, bad, err := s.scanCalls(ctx, q.match, searchLimit+1)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, "calls: "+shortErr(err))
		return
	}
	if len(rows) > searchLimit {
		rows, v.More = rows[:searchLimit], true
	}
	v.Rows, v.Bad, v.Searched = rows, bad, len(r.URL.RawQuery) > 0
	s.render(w, r, "calls", "Calls", v)
}

// stageOf is where a call stands: the stage of its last step.
func stageOf(r pipeline.StatusRecord) string {
	if n := len(r.History); n > 0 {
		return r.History[n-1].Stage
	}
	return ""
}
