package console

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/streams"
)

// letterRow is one dead letter with its fate.
type letterRow struct {
	dlq.Letter
	Fate    string
	Settled bool
}

// dlqQuery is the filter form of the dead letters page.
type dlqQuery struct {
	Stage, Failure, Tool, Since string
	All                         bool // settled letters too
}

func (q dlqQuery) values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"stage": q.Stage, "failure": q.Failure, "tool": q.Tool, "since": q.Since} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.All {
		v.Set("all", "1")
	}
	return v
}

// dlqLimit is how many letters the page lists, newest first.
const dlqLimit = 500

func readDLQQuery(get func(string) string) dlqQuery {
	return dlqQuery{Stage: get("stage"), Failure: get("failure"), Tool: get("tool"), Since: get("since"), All: get("all") != ""}
}

// filter checks q and turns it into a dlq.Filter.
func (s *Server) filter(q dlqQuery) (dlq.Filter, string) {
	f := dlq.Filter{Stage: q.Stage, Failure: q.Failure, Tool: q.Tool}
	if q.Stage != "" && !streams.IsStage(q.Stage) {
		return f, "stage: not a stage (" + strings.Join(streams.Names(), ", ") + ")"
	}
	if q.Failure != "" && !token(q.Failure) {
		return f, "failure: not a failure class"
	}
	if len(q.Tool) > 200 {
		return f, "tool: too long"
	}
	since, ok := parseSince(strings.TrimSpace(q.Since), s.cfg.Now())
	if !ok {
		return f, "since: want a duration (1h, 15m) or a time (2026-12-01T15:04)"
	}
	f.Since = since
	return f, ""
}

// token is one subject token of letters, digits, '_' and '-'.
func token(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// selectLetters reads the letters f selects with their fates; unsettled
// only unless all.
func (s *Server) selectLetters(ctx context.Context, f dlq.Filter, all bool) ([]letterRow, error) {
	letters, err := dlq.List(ctx, s.cfg.JS, f)
	if err != nil {
		return nil, err
	}
	fates, err := dlq.Fates(ctx, s.cfg.JS, letters)
	if err != nil {
		return nil, err
	}
	var rows []letterRow
	for _, l := range letters {
		fa := fates[l.Seq]
		if fa.Settled() && !all {
			continue
		}
		rows = append(rows, letterRow{Letter: l, Fate: fa.String(), Settled: fa.Settled()})
	}
	return rows, nil
}

type dlqView struct {
	Q        dlqQuery
	Rows     []letterRow
	More     bool
	Failures []string
	Stages   []string
}

func (s *Server) dlqPage(w http.ResponseWriter, r *http.Request) {
	q := readDLQQuery(r.URL.Query().Get)
	f, bad := s.filter(q)
	if bad != "" {
		s.fail(w, r, http.StatusBadRequest, bad)
		return
	}
	ctx, cancel := s.timeout(r.Context())
	defer cancel()
	rows, err := s.selectLetters(ctx, f, q.All)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, "dead letters: "+shortErr(err))
		return
	}
	v := dlqView{Q: q, Stages: streams.Names()}
	// newest first
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	if len(rows) > dlqLimit {
		rows, v.More = rows[:dlqLimit], true
	}
	v.Rows, v.Failures = rows, failureClasses()
	s.render(w, r, "dlq", "Dead letters", v)
}

type letterView struct {
	Row      letterRow
	Evidence string // the envelope or input, redacted by the audit's rules
	Raw      string // raw_arguments decoded (indented when JSON), redacted
	Parsed   string // the parsed arguments, redacted
	Errors   []pathErr
	Header   map[string]string
}

func (s *Server) letterPage(w http.ResponseWriter, r *http.Request) {
	seq, err := strconv.ParseUint(r.PathValue("seq"), 10, 64)
	if err != nil || seq == 0 {
		s.fail(w, r, http.StatusNotFound, "not a dead-letter sequence")
		return
	}
	ctx, cancel := s.timeout(r.Context())
	defer cancel()
	l, err := dlq.Get(ctx, s.cfg.JS, seq)
	if err != nil {
		s.fail(w, r, http.StatusNotFound, "no dead letter at seq "+strconv.FormatUint(seq, 10))
		return
	}
	fates, _ := dlq.Fates(ctx, s.cfg.JS, []dlq.Letter{l})
	v := letterView{Row: letterRow{Letter: l, Fate: fates[l.Seq].String(), Settled: fates[l.Seq].Settled()}, Header: map[string]string{}}
	for _, e := range l.Errors {
		v.Errors = append(v.Errors, splitPath(redact.Text(e)))
	}
	sensitive := s.toolCache(ctx).sensitive(l.Tool)
	if l.Envelope != nil {
		e := *l.Envelope
		raw := e.RawArguments
		e.RawArguments = redactJSON([]byte(raw), sensitive)
		if len(e.Arguments) > 0 {
			e.Arguments = []byte(redactJSON(e.Arguments, sensitive))
		}
		for i := range e.Repairs {
			e.Repairs[i].RawArguments = redactJSON([]byte(e.Repairs[i].RawArguments), sensitive)
			e.Repairs[i].Answer = redactJSON([]byte(e.Repairs[i].Answer), sensitive)
		}
		v.Raw = prettyJSON(e.RawArguments)
		if len(e.Arguments) > 0 {
			v.Parsed = prettyJSON(e.Arguments)
		}
		v.Evidence = evidenceJSON(e)
	} else {
		v.Evidence = redactJSON(l.Data, sensitive)
	}
	for k := range l.Header {
		v.Header[k] = l.Header.Get(k)
	}
	s.render(w, r, "letter", "Dead letter "+strconv.FormatUint(seq, 10), v)
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// selection is what a replay or purge form selects: the checked sequences,
// or, with mode filter, everything the filter fields select.
func (s *Server) selection(ctx context.Context, r *http.Request) ([]letterRow, dlqQuery, string) {
	q := readDLQQuery(r.PostFormValue)
	f, bad := s.filter(q)
	if bad != "" {
		return nil, q, bad
	}
	rows, err := s.selectLetters(ctx, f, q.All)
	if err != nil {
		return nil, q, "dead letters: " + shortErr(err)
	}
	if r.PostFormValue("mode") == "filter" {
		return rows, q, ""
	}
	want := map[uint64]bool{}
	for _, v := range r.PostForm["seq"] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, q, "seq: not a sequence number"
		}
		want[n] = true
	}
	if len(want) == 0 {
		return nil, q, "nothing selected: tick the letters, or use the filter"
	}
	var sel []letterRow
	for _, row := range rows {
		if want[row.Seq] {
			sel = append(sel, row)
			delete(want, row.Seq)
		}
	}
	// A ticked letter the filter no longer lists (settled, say) is read by
	// itself: the operator chose it.
	for n := range want {
		l, err := dlq.Get(ctx, s.cfg.JS, n)
		if err != nil {
			return nil, q, "seq " + itoa(n) + ": no such dead letter"
		}
		sel = append(sel, letterRow{Letter: l})
	}
	return sel, q, ""
}

// purgeView is the confirmation page of a purge.
type purgeView struct {
	Rows    []letterRow
	Settled int
	Q       dlqQuery
	Mode    string
}

func (s *Server) purgeConfirm(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.timeout(r.Context())
	defer cancel()
	rows, q, bad := s.selection(ctx, r)
	if bad != "" {
		s.fail(w, r, http.StatusBadRequest, bad)
		return
	}
	v := purgeView{Rows: rows, Q: q, Mode: r.PostFormValue("mode")}
	for _, row := range rows {
		if row.Settled {
			v.Settled++
		}
	}
	s.render(w, r, "purge", "Purge dead letters", v)
}

func (s *Server) purge(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.timeout(r.Context())
	defer cancel()
	rows, q, bad := s.selection(ctx, r)
	if bad != "" {
		s.fail(w, r, http.StatusBadRequest, bad)
		return
	}
	letters := make([]dlq.Letter, len(rows))
	for i, row := range rows {
		letters[i] = row.Letter
	}
	n, err := dlq.Purge(ctx, s.cfg.JS, letters)
	u := userOf(r)
	if err != nil {
		s.cfg.Log.Error().Err(err).Str("user", u.Name).Int("purged", n).Msg("console: purge")
		s.fail(w, r, http.StatusBadGateway, "purge: "+shortErr(err))
		return
	}
	s.cfg.Log.Info().Str("user", u.Name).Int("purged", n).Msg("console: purged dead letters")
	s.renderFlashDLQ(w, r, q, &flash{OK: true, Msg: "purged " + strconv.Itoa(n) + " dead letter(s), by " + u.Name})
}

func (s *Server) renderFlashDLQ(w http.ResponseWriter, r *http.Request, q dlqQuery, fl *flash) {
	ctx, cancel := s.timeout(r.Context())
	defer cancel()
	f, _ := s.filter(q)
	rows, err := s.selectLetters(ctx, f, q.All)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, "dead letters: "+shortErr(err))
		return
	}
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	v := dlqView{Q: q, Rows: rows, Stages: streams.Names(), Failures: failureClasses()}
	s.renderStatus(w, r, http.StatusOK, "dlq", "Dead letters", v, fl)
}

// failureClasses are the failure classes a dead letter can have.
func failureClasses() []string {
	var out []string
	for _, st := range call.Statuses() {
		if !st.OK() && st.Terminal() || st.Repairable() {
			out = append(out, string(st))
		}
	}
	return out
}
