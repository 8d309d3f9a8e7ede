package console

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/whatif"
)

// Bounds of one what-if run from the console: the request body is bounded
// by checkCSRF (1 MiB) and a definition by maxWhatIfDef; the run by
// whatIfTime and whatIfCalls; one runs at a time per console (whatIfSem),
// so a viewer cannot make it re-evaluate windows in parallel.
const (
	maxWhatIfDef = 256 << 10
	whatIfTime   = 30 * time.Second
	whatIfCalls  = 100_000
	maxWhatIfAge = 7 * 24 * time.Hour // the status records' retention
)

// whatIfView is the what-if form and, after a run, its report.
type whatIfView struct {
	Definition string
	Since      string
	Ran        bool
	Report     []*whatif.ToolReport
	Skipped    map[string]int
	Refused    int
}

// whatIfRun re-runs the recorded calls of a window through a pasted
// definition's gates and limits (whatif.RunAudit) and shows the table the
// CLI prints, each example call linked to its story. It reads what the
// console user may read — status records and the audit events, whose
// arguments are redacted — never TOOLGATE_IN (producers' tokens): a call
// whose audit arguments were redacted is counted as not re-evaluated. It
// stores nothing and publishes nothing, so any viewer may run it.
func (s *Server) whatIfRun(w http.ResponseWriter, r *http.Request) {
	v := whatIfView{Definition: r.PostFormValue("definition"), Since: strings.TrimSpace(r.PostFormValue("since"))}
	bad := func(msg string) {
		s.renderStatus(w, r, http.StatusBadRequest, "whatif", "What if", v, &flash{Msg: msg})
	}
	if v.Since == "" {
		v.Since = "24h"
	}
	since, err := time.ParseDuration(v.Since)
	switch {
	case err != nil || since <= 0 || since > maxWhatIfAge:
		bad("since: " + v.Since + " is not a duration from 1s to 168h, such as 24h")
		return
	case strings.TrimSpace(v.Definition) == "":
		bad("definition: paste a tools file (tools: [...], as toolgate tools apply reads)")
		return
	case len(v.Definition) > maxWhatIfDef:
		bad("definition: larger than 256 KiB")
		return
	}
	defs, err := tool.Load("definition", []byte(v.Definition))
	if err != nil {
		bad(shortErr(err))
		return
	}
	ev, err := whatif.New(defs)
	if err != nil {
		bad(shortErr(err))
		return
	}
	select {
	case s.whatIfSem <- struct{}{}:
		defer func() { <-s.whatIfSem }()
	default:
		s.renderStatus(w, r, http.StatusTooManyRequests, "whatif", "What if", v, &flash{Msg: "a what-if is already running on this console; try again when it ends"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), whatIfTime)
	defer cancel()
	rep, err := whatif.RunAudit(ctx, whatif.AuditSource{JS: s.cfg.JS, Since: s.cfg.Now().Add(-since), MaxCalls: whatIfCalls}, ev)
	if err != nil {
		s.renderStatus(w, r, http.StatusBadGateway, "whatif", "What if", v, &flash{Msg: "what-if: " + shortErr(err)})
		return
	}
	v.Ran, v.Report, v.Skipped, v.Refused = true, rep.Sorted(), rep.Skipped, rep.Refused()
	s.render(w, r, "whatif", "What if", v)
}

// whatIfPage is the empty form.
func (s *Server) whatIfPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "whatif", "What if", whatIfView{Since: "24h"})
}
