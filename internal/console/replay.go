package console

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/dlq"
)

// job is one replay the console runs: started by a POST, it runs on after
// the request, and its page follows it live.
type job struct {
	ID      string
	By      string
	Started time.Time

	mu      sync.Mutex
	phase   string
	done    int
	total   int
	sum     *dlq.Summary
	err     string
	changed chan struct{} // closed and replaced on every change
}

type jobs struct {
	mu   sync.Mutex
	byID map[string]*job
	ids  []string
}

// maxJobs is how many replays the console remembers.
const maxJobs = 50

func newJobs() *jobs { return &jobs{byID: map[string]*job{}} }

func (js *jobs) add(j *job) {
	js.mu.Lock()
	defer js.mu.Unlock()
	js.byID[j.ID] = j
	js.ids = append(js.ids, j.ID)
	if len(js.ids) > maxJobs {
		delete(js.byID, js.ids[0])
		js.ids = js.ids[1:]
	}
}

func (js *jobs) get(id string) *job {
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.byID[id]
}

func (j *job) update(phase string, done, total int) {
	j.mu.Lock()
	j.phase, j.done, j.total = phase, done, total
	close(j.changed)
	j.changed = make(chan struct{})
	j.mu.Unlock()
}

func (j *job) finish(sum dlq.Summary, err error) {
	j.mu.Lock()
	j.sum = &sum
	if err != nil {
		j.err = err.Error()
	}
	close(j.changed)
	j.changed = make(chan struct{})
	j.mu.Unlock()
}

// state is the job's progress text, whether it ended, and a channel closed
// at its next change.
func (j *job) state() (string, bool, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.progressText(), j.sum != nil, j.changed
}

func (j *job) progressText() string {
	if j.sum != nil {
		if j.err != "" {
			return "stopped: " + j.err
		}
		return "done"
	}
	switch j.phase {
	case "publish":
		return fmt.Sprintf("replaying %d/%d", j.done, j.total)
	case "wait":
		return fmt.Sprintf("outcomes %d/%d", j.done, j.total)
	}
	return "starting"
}

func (s *Server) replay(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.timeout(r.Context())
	defer cancel()
	rows, q, bad := s.selection(ctx, r)
	if bad != "" {
		s.renderFlashDLQ(w, r, q, &flash{Msg: bad})
		return
	}
	if len(rows) == 0 {
		s.renderFlashDLQ(w, r, q, &flash{Msg: "no dead letters match; nothing to replay"})
		return
	}
	letters := make([]dlq.Letter, len(rows))
	for i, row := range rows {
		letters[i] = row.Letter
	}
	u := userOf(r)
	j := &job{ID: hex.EncodeToString(randomBytes(8)), By: u.Name, Started: s.cfg.Now(), changed: make(chan struct{})}
	s.jobs.add(j)
	s.cfg.Log.Info().Str("user", u.Name).Str("job", j.ID).Int("letters", len(letters)).Msg("console: replay")
	opts := dlq.Options{Wait: s.cfg.ReplayWait, Progress: j.update, Now: s.cfg.Now, By: u.Name,
		// A human decision is replayed only when asked for by its class,
		// as `toolgate dlq replay --failure approval_denied`.
		Denied: q.Failure == string(call.ApprovalDenied)}
	go func() {
		rctx, cancel := context.WithTimeout(s.ctx, s.cfg.ReplayWait+time.Minute)
		defer cancel()
		sum, err := dlq.Replay(rctx, s.cfg.JS, letters, opts)
		j.finish(sum, err)
		s.cfg.Log.Info().Str("user", j.By).Str("job", j.ID).Int("replayed", sum.Replayed).Int("executed", sum.Executed).Int("failed_again", sum.FailedAgain).Msg("console: replay done")
	}()
	http.Redirect(w, r, Prefix+"dlq/replays/"+j.ID, http.StatusSeeOther)
}

// replayView is a replay's page: progress, then the CLI's summary.
type replayView struct {
	Job      *job
	Progress string
	Done     bool
	Sum      *dlq.Summary
	Err      string
	Outcomes []outcomeCount
	Skipped  []dlq.Item
	Settled  int
}

type outcomeCount struct {
	Status string
	N      int
}

func (s *Server) replayPage(w http.ResponseWriter, r *http.Request) {
	j := s.jobs.get(r.PathValue("job"))
	if j == nil {
		s.fail(w, r, http.StatusNotFound, "no such replay (the console remembers its last 50)")
		return
	}
	j.mu.Lock()
	v := replayView{Job: j, Progress: j.progressText(), Done: j.sum != nil, Sum: j.sum, Err: j.err}
	j.mu.Unlock()
	if v.Sum != nil {
		for k, n := range v.Sum.Outcomes {
			v.Outcomes = append(v.Outcomes, outcomeCount{Status: string(k), N: n})
		}
		sort.Slice(v.Outcomes, func(a, b int) bool { return v.Outcomes[a].Status < v.Outcomes[b].Status })
		for _, it := range v.Sum.Items {
			switch {
			case strings.HasPrefix(it.Skip, "settled:"):
				v.Settled++
			case it.Skip != "":
				v.Skipped = append(v.Skipped, it)
			}
		}
	}
	s.render(w, r, "replay", "Replay", v)
}
