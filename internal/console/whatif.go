package console

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/whatif"
)

// whatIfWait bounds one what-if: a day of traffic is read a message at a
// time.
const whatIfWait = 3 * time.Minute

// whatIfView is the what-if page: the form again, and the report.
type whatIfView struct {
	Definition string
	Hours      int
	Tool       string
	Tools      []*whatif.ToolReport
	Skipped    map[string]int
	Bad        []string
	Refused    int
	Ran        bool
}

// whatIf is POST tools/whatif: the report of `toolgate tools apply
// --what-if` for a pasted or uploaded definition. Viewers may run it: it
// reads what the pages read (and TOOLGATE_IN, message by message) and
// stores, publishes and changes nothing.
func (s *Server) whatIf(w http.ResponseWriter, r *http.Request) {
	v := whatIfView{Definition: r.PostFormValue("definition"), Tool: strings.TrimSpace(r.PostFormValue("tool")), Hours: 24}
	if f, _, err := r.FormFile("file"); err == nil {
		data, err := io.ReadAll(io.LimitReader(f, 1<<20))
		f.Close()
		if err == nil && len(data) > 0 {
			v.Definition = string(data)
		}
	}
	if h, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue("hours"))); err == nil {
		v.Hours = h
	}
	refuse := func(msg string) {
		s.renderStatus(w, r, http.StatusBadRequest, "whatif", "What if", v, &flash{Msg: msg})
	}
	switch {
	case strings.TrimSpace(v.Definition) == "":
		refuse("paste or upload tool definitions")
		return
	case v.Hours < 1 || v.Hours > 7*24:
		refuse("hours: 1 to 168")
		return
	}
	defs, err := tool.Load("pasted definitions", []byte(v.Definition))
	if err != nil {
		refuse(shortErr(err))
		return
	}
	ev, err := whatif.New(defs)
	if err != nil {
		refuse(shortErr(err))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), whatIfWait)
	defer cancel()
	rep, err := whatif.Run(ctx, whatif.Source{JS: s.cfg.JS, Since: s.cfg.Now().Add(-time.Duration(v.Hours) * time.Hour), Tool: v.Tool}, ev)
	if err != nil {
		s.renderStatus(w, r, http.StatusBadGateway, "whatif", "What if", v, &flash{Msg: "what if: " + shortErr(err)})
		return
	}
	v.Ran, v.Tools, v.Skipped, v.Bad, v.Refused = true, rep.Sorted(), rep.Skipped, rep.Bad, rep.Refused()
	s.render(w, r, "whatif", "What if", v)
}
