package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/streams"
)

// approvalRecords reads every well-formed record of the approvals bucket
// (at most maxScan).
func (s *Server) approvalRecords(ctx context.Context) ([]approval.Record, error) {
	kv, err := s.cfg.JS.KeyValue(ctx, streams.BucketApprovals)
	if err != nil {
		return nil, err
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	var out []approval.Record
	for seen := 0; seen < maxScan; seen++ {
		var e jetstream.KeyValueEntry
		select {
		case e = <-w.Updates():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e == nil {
			break
		}
		if r, err := approval.Decode(e.Key(), e.Value()); err == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// pendingRow is one call waiting for a decision, as the queue shows it.
type pendingRow struct {
	approval.Record
	Risk      string
	Caller    call.Request
	Identity  string
	Args      string // in full for approvers, redacted for viewers
	Redacted  bool
	Repairs   int
	FirstSeen time.Time
}

func (s *Server) approvalsPage(w http.ResponseWriter, r *http.Request) {
	s.renderApprovals(w, r, http.StatusOK, nil)
}

func (s *Server) renderApprovals(w http.ResponseWriter, r *http.Request, code int, fl *flash) {
	ctx, cancel := s.timeout(r.Context())
	defer cancel()
	recs, err := s.approvalRecords(ctx)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, "approvals: "+shortErr(err))
		return
	}
	full := userOf(r).Role.Can(Approver)
	tools := s.toolCache(ctx)
	var rows []pendingRow
	for _, rec := range recs {
		if rec.State != approval.Pending {
			continue
		}
		row := pendingRow{Record: rec, Risk: "-"}
		if e, err := call.Unmarshal(rec.Envelope); err == nil {
			row.Caller, row.Identity, row.Repairs = e.Request, pipeline.IdentityOf(e), e.RepairAttempts
			if full {
				row.Args = prettyJSON(e.Arguments)
			} else {
				row.Args, row.Redacted = redactArgs(e.Arguments, tools.sensitive(rec.Tool)), true
			}
		}
		if d, ok := tools.defs[rec.Tool]; ok && d.Policy != nil {
			row.Risk = d.Policy.Risk
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].RequestedAt.Before(rows[j].RequestedAt) })
	s.renderStatus(w, r, code, "approvals", "Approvals", rows, fl)
}

// decide is approve or deny from the queue: the decision is bound to the
// argument hash the page showed (form field hash), made with
// approval.Store.Decide as `toolgate approve` makes it, by the user's name.
func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	id, decision := r.PathValue("id"), r.PathValue("decision")
	var state approval.State
	switch decision {
	case "approve":
		state = approval.Approved
	case "deny":
		state = approval.Denied
	default:
		http.NotFound(w, r)
		return
	}
	u := userOf(r)
	hash := strings.TrimSpace(r.PostFormValue("hash"))
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if len(reason) > 1000 {
		reason = reason[:1000]
	}
	refuse := func(msg string) {
		s.cfg.Log.Warn().Str("user", u.Name).Str("call", id).Str("decision", decision).Str("why", msg).Msg("console: decision refused")
		s.renderApprovals(w, r, http.StatusConflict, &flash{Msg: msg})
	}
	if !call.ValidResponseID(id) {
		refuse("no such call")
		return
	}
	if len(hash) < 16 {
		refuse("refused: the page did not say which arguments you reviewed (no argument hash); reload and decide again")
		return
	}
	ctx, cancel := s.timeout(r.Context())
	defer cancel()
	kv, err := s.cfg.JS.KeyValue(ctx, streams.BucketApprovals)
	if err != nil {
		refuse("approvals: " + shortErr(err))
		return
	}
	store := approval.NewStore(kv)
	rec, rev, err := store.Decide(ctx, id, state, u.Name, reason, hash, s.cfg.Now())
	switch {
	case errors.Is(err, approval.ErrChanged):
		refuse("refused: the call's arguments changed since the page showed them (arguments changed); review them again")
		return
	case errors.Is(err, approval.ErrNotFound):
		refuse("refused: call " + id + " is not waiting for approval")
		return
	case errors.Is(err, approval.ErrDecided) && (rec.State == approval.Expired || rec.Due(s.cfg.Now())):
		refuse(expiredNote(rec))
		return
	case errors.Is(err, approval.ErrDecided):
		refuse("refused: " + strings.TrimPrefix(err.Error(), "approval: "))
		return
	case errors.Is(err, approval.ErrConflict):
		refuse("refused: someone decided at the same time; reload")
		return
	case err != nil:
		refuse("refused: " + shortErr(err))
		return
	}
	s.cfg.Log.Info().Str("user", u.Name).Str("call", id).Str("decision", string(rec.State)).Str("args_hash", approval.ShortHash(rec.ArgsHash)).Msg("console: decided")
	msg := "call " + id + " " + string(rec.State) + " by " + u.Name
	if err := store.Resume(ctx, s.cfg.JS, rec, rev); err != nil {
		msg += "; it could not be sent on yet (the policy stage resends it)"
	}
	s.renderApprovals(w, r, http.StatusOK, &flash{OK: true, Msg: msg})
}

// expiredNote says that rec's call expired before a decision, and where
// the call is now: ended approval_expired, its dead letter kept.
func expiredNote(rec approval.Record) string {
	return "refused: call " + rec.CallID + " expired at " + rec.ExpiresAt.Local().Format(time.DateTime) +
		" before anyone decided: it ends as approval_expired and nothing runs. Its dead letter (Dead letters, failure approval_expired; toolgate dlq ls --call " +
		rec.CallID + ") and its story (" + Prefix + "calls/" + rec.CallID + ") keep what it was"
}

// redactArgs is args redacted as the audit redacts raw arguments.
func redactArgs(args json.RawMessage, sensitive []string) string {
	if len(args) == 0 {
		return ""
	}
	return prettyJSON(redactJSON(args, sensitive))
}
