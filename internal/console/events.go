package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// eventsMax is how long one event stream lasts; the browser's EventSource
// reconnects by itself, and a server shutting down is not held up long.
const eventsMax = 10 * time.Minute

// overviewEvery is how often the overview's numbers are sent.
const overviewEvery = 2 * time.Second

// events is the server-sent event stream of a page's live parts, by topic:
// overview (its numbers, every 2s), approvals (the pending count) and
// replay:JOB (progress, then a reload once the summary is there). Events
// are "live" (a JSON list of {k, t, a}: set the text of data-live=k) and
// "reload".
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	topic := r.URL.Query().Get("topic")
	var next func() (event string, data any, wait <-chan struct{}, end bool)
	switch {
	case topic == "overview":
		next = func() (string, any, <-chan struct{}, bool) {
			return "live", s.ov.get(r.Context()).live(), nil, false
		}
	case topic == "approvals" || strings.HasPrefix(topic, "approvals:"):
		shown := strings.TrimPrefix(topic, "approvals:") // the count the page was rendered with
		next = func() (string, any, <-chan struct{}, bool) {
			// Read now, not from the overview's cache: the page was just
			// rendered from the bucket, and an older count would undo it.
			ctx, cancel := s.timeout(r.Context())
			defer cancel()
			var ov overview
			if err := s.pendingApprovals(ctx, &ov); err != nil {
				return "live", []liveItem{}, nil, false
			}
			items := []liveItem{{K: "approvals", T: fmt.Sprint(ov.Approvals)}}
			if shown != topic && shown != fmt.Sprint(ov.Approvals) {
				items = append(items, liveItem{K: "approvals-note", T: "The queue has changed since this page was shown: reload it to see every call waiting."})
			}
			return "live", items, nil, false
		}
	case strings.HasPrefix(topic, "replay:"):
		j := s.jobs.get(strings.TrimPrefix(topic, "replay:"))
		if j == nil {
			http.Error(w, "no such replay", http.StatusNotFound)
			return
		}
		next = func() (string, any, <-chan struct{}, bool) {
			text, done, ch := j.state()
			if done {
				return "reload", struct{}{}, nil, true
			}
			return "live", []liveItem{{K: "replay-progress", T: text}}, ch, false
		}
	default:
		http.Error(w, "unknown topic", http.StatusBadRequest)
		return
	}
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		w.Header().Set("Retry-After", "10")
		http.Error(w, "too many live streams open; the page works without", http.StatusServiceUnavailable)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 3000\n\n")
	fl.Flush()
	deadline := time.NewTimer(eventsMax)
	defer deadline.Stop()
	tick := time.NewTicker(overviewEvery)
	defer tick.Stop()
	for {
		event, data, wait, end := next()
		b, _ := json.Marshal(data)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return
		}
		fl.Flush()
		if end {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-deadline.C:
			return
		case <-wait: // nil: never
		case <-tick.C:
		}
	}
}
