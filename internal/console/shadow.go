package console

import (
	"errors"
	"net/http"
	"time"

	"github.com/toolgate/toolgate/internal/shadow"
	"github.com/toolgate/toolgate/internal/whatif"
	"github.com/toolgate/toolgate/streams"
)

// shadowView is the shadow page: the applied shadow revision, if any, and
// its report.
type shadowView struct {
	Applied   bool
	ID, File  string
	StartedAt time.Time
	Tools     []string
	Report    []*whatif.ToolReport
	Refused   int
	Bad       []string
}

// shadowPage shows what the shadow revision would have decided
// differently since it started. It reads the shadow revision and the
// report records (counts, call ids, reasons from the definitions), never
// the recorded input: any viewer may see it, and it changes nothing.
func (s *Server) shadowPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.timeout(r.Context())
	defer cancel()
	shadows, err := s.cfg.JS.KeyValue(ctx, streams.BucketToolsShadow)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, "shadow: "+shortErr(err))
		return
	}
	var v shadowView
	rev, _, err := shadow.Load(ctx, shadows)
	switch {
	case errors.Is(err, shadow.ErrNone):
		s.render(w, r, "shadow", "Shadow", v)
		return
	case err != nil:
		s.fail(w, r, http.StatusBadGateway, shortErr(err))
		return
	}
	reports, err := s.cfg.JS.KeyValue(ctx, streams.BucketShadowReport)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, "shadow report: "+shortErr(err))
		return
	}
	rep, err := shadow.Read(ctx, reports, rev.ID)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, shortErr(err))
		return
	}
	v = shadowView{Applied: true, ID: rev.ID, File: rev.File, StartedAt: rev.StartedAt, Tools: rev.Names(),
		Report: rep.Sorted(), Refused: rep.Refused(), Bad: rep.Bad}
	s.render(w, r, "shadow", "Shadow", v)
}
