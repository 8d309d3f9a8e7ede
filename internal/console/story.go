package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/streams"
)

// story is a call's whole story: its status record, every step with the
// time spent in it, what it waits for, its arguments (raw, redacted as the
// audit redacts them; parsed), its repairs, seals, dead letters, approval
// and result.
type story struct {
	Rec        pipeline.StatusRecord
	Steps      []step
	Total      time.Duration
	Errors     []pathErr
	Waiting    *pipeline.Wait
	Limit      *limitMention // the limit that holds, rejected or held it (limits.go)
	Result     *pipeline.Result
	ResultJSON string
	Message    string
	RawArgs    string
	RawFrom    string
	Parsed     string
	ParsedFrom string
	Repairs    []repairView
	Seals      []call.Seal
	SealsFrom  string
	// SealsAsOfWait: the seals are those of the envelope stored while the
	// call waited for approval, before policy sealed its pass (the approved
	// envelope is not stored; execute's note lists every seal it checked).
	SealsAsOfWait bool
	// Checked is what the execute gate's step says it verified (the seals
	// of every gate), kept in the history of every call that ran.
	Checked  string
	Decision *call.Decision
	Approval *approval.Record
	Letters  []letterRow
	Caller   *call.Request
	Problems []string // parts that could not be read
}

// step is one history entry and how long the call spent reaching it from
// the one before (the time its stage held it).
type step struct {
	call.Step
	Took time.Duration
}

// pathErr is an error with the JSON path it names, when it names one
// ("line_items/0/quantity: must be > 0").
type pathErr struct{ Path, Msg string }

type repairView struct {
	Attempt int
	Failure call.Status
	Asked   []string // the errors the model was told
	Raw     string   // the arguments it was asked to repair, redacted
	Answer  string   // what it answered, redacted
	At      time.Time
}

func splitPath(s string) pathErr {
	if p, msg, ok := strings.Cut(s, ": "); ok && p != "" && !strings.ContainsAny(p, " \t") {
		return pathErr{Path: p, Msg: msg}
	}
	return pathErr{Msg: s}
}

func (s *Server) callPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !call.ValidResponseID(id) {
		s.fail(w, r, http.StatusNotFound, "not a call id: 1 to 128 letters, digits, '-' and '_'")
		return
	}
	ctx, cancel := s.timeout(r.Context())
	defer cancel()
	st, err := s.storyOf(ctx, id)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, "call "+id+": "+shortErr(err))
		return
	}
	if st == nil {
		s.fail(w, r, http.StatusNotFound, "no call "+id+" (toolgate keeps status records 7 days by default)")
		return
	}
	s.render(w, r, "call", "Call "+id, st)
}

func (s *Server) storyOf(ctx context.Context, id string) (*story, error) {
	rec, err := s.record(ctx, id)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, nil
	}
	st := &story{Rec: *rec, Limit: limitOf(*rec)}
	for i, h := range rec.History {
		sp := step{Step: h}
		if i > 0 {
			sp.Took = h.At.Sub(rec.History[i-1].At)
		}
		st.Steps = append(st.Steps, sp)
	}
	if n := len(rec.History); n > 1 {
		st.Total = rec.History[n-1].At.Sub(rec.History[0].At)
	}
	for _, e := range rec.Errors {
		st.Errors = append(st.Errors, splitPath(redact.Text(e))) // as the audit: errors quote values
	}
	for _, h := range rec.History {
		if h.Stage == streams.Execute && strings.Contains(h.Note, "seals checked") {
			st.Checked = h.Note
		}
	}
	st.Waiting = rec.Waiting
	tools := s.toolCache(ctx)
	sensitive := tools.sensitive(rec.Tool)
	if res, err := s.results(ctx, rec.ResponseID); err != nil {
		st.Problems = append(st.Problems, "results: "+shortErr(err))
	} else {
		for i := range res {
			if res[i].CallID == id {
				st.Result = &res[i] // the last wins: a replayed call ends again
			}
		}
	}
	if st.Result != nil {
		st.ResultJSON = prettyJSON(st.Result.Result)
		st.Message = prettyJSON(st.Result.Message)
		if len(st.Errors) == 0 {
			for _, e := range st.Result.Errors {
				st.Errors = append(st.Errors, splitPath(redact.Text(e)))
			}
		}
	}
	since := time.Time{}
	if len(rec.History) > 0 {
		since = rec.History[0].At.Add(-time.Minute)
	}
	// The envelope, with raw arguments, repairs and seals, is kept only
	// while the call waits for a human and in its dead letters.
	var env *call.Envelope
	if rec.Status == call.ApprovalRequired || hasApprovalStep(rec.History) {
		if a, err := s.approvalOf(ctx, id); err != nil {
			st.Problems = append(st.Problems, "approval: "+shortErr(err))
		} else if a != nil {
			st.Approval = a
			if e, err := call.Unmarshal(a.Envelope); err == nil {
				env = &e
				st.SealsFrom = "the waiting envelope (approval record)"
			}
		}
	}
	letters, err := dlq.List(ctx, s.cfg.JS, dlq.Filter{CallID: id, Since: since})
	if err != nil {
		st.Problems = append(st.Problems, "dead letters: "+shortErr(err))
	}
	if len(letters) > 0 {
		fates, _ := dlq.Fates(ctx, s.cfg.JS, letters)
		for _, l := range letters {
			st.Letters = append(st.Letters, letterRow{Letter: l, Fate: fates[l.Seq].String()})
		}
		if l := letters[len(letters)-1]; l.Envelope != nil && (env == nil || l.Time.After(st.Approval.RequestedAt)) {
			env = l.Envelope
			st.SealsFrom = "its newest dead letter (seq " + itoa(l.Seq) + ")"
		}
	}
	if env != nil {
		st.Caller = &env.Request
		st.RawArgs, st.RawFrom = redactJSON([]byte(env.RawArguments), sensitive), st.SealsFrom
		if len(env.Arguments) > 0 {
			st.Parsed, st.ParsedFrom = prettyJSON(redactJSON(env.Arguments, sensitive)), st.SealsFrom
		}
		st.Seals, st.Decision = env.Seals, env.Approval
		st.SealsAsOfWait = env.Status == call.ApprovalRequired && rec.Status != call.ApprovalRequired
		for _, rp := range env.Repairs {
			v := repairView{Attempt: rp.Attempt, Failure: rp.Failure, Raw: redactJSON([]byte(rp.RawArguments), sensitive), Answer: redactJSON([]byte(rp.Answer), sensitive), At: rp.At}
			for _, e := range rp.Errors {
				v.Asked = append(v.Asked, redact.Text(e))
			}
			st.Repairs = append(st.Repairs, v)
		}
	}
	if st.RawArgs == "" {
		if ev := resultAudit(id, st.Result); ev != nil {
			st.RawArgs, st.RawFrom = ev.RawArgumentsRedacted, "the audit event in its result ("+ev.EventType+")"
		}
	}
	if st.RawArgs == "" { // a result of before issue 30, or none: the audit stream
		if ev, err := s.auditOf(ctx, id, since); err != nil {
			st.Problems = append(st.Problems, "audit: "+shortErr(err))
		} else if ev != nil {
			st.RawArgs, st.RawFrom = ev.RawArgumentsRedacted, "the audit event ("+ev.EventType+")"
		}
	}
	return st, nil
}

func hasApprovalStep(h []call.Step) bool {
	for _, s := range h {
		if s.Status == call.ApprovalRequired {
			return true
		}
	}
	return false
}

func (s *Server) approvalOf(ctx context.Context, id string) (*approval.Record, error) {
	kv, err := s.cfg.JS.KeyValue(ctx, streams.BucketApprovals)
	if err != nil {
		return nil, err
	}
	a, _, err := approval.NewStore(kv).Get(ctx, id)
	if errors.Is(err, approval.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// resultAudit is the audit event the call's result res carries (issue
// 30); nil when there is no result (the story read the response's results
// above) or it predates the fold (its event is on the audit stream:
// auditOf).
func resultAudit(id string, res *pipeline.Result) *pipeline.AuditEvent {
	if res == nil || res.Audit == nil || res.Audit.CallID != id {
		return nil
	}
	return res.Audit
}

// auditOf finds the call's audit event on the audit stream (events written
// before the results carried them, or with --audit-stream): it is read from
// since, headers only, up to maxScan events; the matching one is fetched.
func (s *Server) auditOf(ctx context.Context, id string, since time.Time) (*pipeline.AuditEvent, error) {
	st, err := s.cfg.JS.Stream(ctx, streams.StreamAudit)
	if err != nil {
		return nil, err
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{streams.Audit(">")}, HeadersOnly: true}
	if !since.IsZero() {
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
	}
	c, err := st.OrderedConsumer(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var found uint64
	for read := 0; read < maxScan; {
		batch, err := c.FetchNoWait(500)
		if err != nil {
			return nil, err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			if m.Headers().Get(streams.HeaderCallID) == id {
				if md, err := m.Metadata(); err == nil {
					found = md.Sequence.Stream // the last wins
				}
			}
		}
		if n == 0 {
			break
		}
		read += n
	}
	if found == 0 {
		return nil, nil
	}
	raw, err := st.GetMsg(ctx, found)
	if err != nil {
		return nil, err
	}
	var ev pipeline.AuditEvent
	if err := json.Unmarshal(raw.Data, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}
