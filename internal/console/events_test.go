package console

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
)

// firstEvent reads the first data line of topic's event stream.
func (r *rig) firstEvent(topic string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.ts.URL+Prefix+"events?topic="+topic, nil)
	resp, err := r.c.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			return line
		}
	}
	r.t.Fatalf("no event on %s: %v", topic, sc.Err())
	return ""
}

// The approvals page is rendered from the bucket; its live count must not
// undo that with an overview computed a moment before the call arrived
// (the screenshot showed "0 pending" above a waiting call).
func TestEvents_approvals_count_is_read_fresh_not_from_the_overview_cache(t *testing.T) {
	r := newRig(t, nil, nil)
	if ov := r.srv.ov.get(context.Background()); ov.Approvals != 0 {
		t.Fatalf("approvals %d before any", ov.Approvals)
	}
	r.waiting("rfresh-0", "delete_customer_account", `{"customer_id":"c1"}`)
	if ev := r.firstEvent("approvals"); !strings.Contains(ev, `{"k":"approvals","t":"1"}`) {
		t.Fatalf("first approvals event %s, want the one pending call", ev)
	}
}

func TestEvents_a_replay_stream_ends_with_reload_once_the_summary_is_there(t *testing.T) {
	r := newRig(t, nil, nil)
	j := &job{ID: "j1", changed: make(chan struct{})}
	r.srv.jobs.add(j)
	j.update("publish", 1, 2)
	if ev := r.firstEvent("replay:j1"); !strings.Contains(ev, "replaying 1/2") {
		t.Fatalf("event %s", ev)
	}
	j.finish(emptySummary(), nil)
	if ev := r.firstEvent("replay:j1"); ev != "{}" {
		t.Fatalf("after the end: %s, want the reload event", ev)
	}
}

func TestEvents_approvals_note_a_queue_that_changed_since_the_page(t *testing.T) {
	r := newRig(t, nil, nil)
	if ev := r.firstEvent("approvals:0"); strings.Contains(ev, "approvals-note") {
		t.Fatalf("unchanged queue: %s", ev)
	}
	_, body := r.get(Prefix + "approvals")
	if !strings.Contains(body, `data-events="approvals:0"`) {
		t.Fatalf("the page does not say what it showed:\n%s", body)
	}
	r.waiting("rnote-0", "delete_customer_account", `{"customer_id":"c1"}`)
	if ev := r.firstEvent("approvals:0"); !strings.Contains(ev, "reload") {
		t.Fatalf("changed queue: %s", ev)
	}
}

func TestEvents_streams_are_bounded(t *testing.T) {
	r := newRig(t, nil, nil)
	r.srv.streams = make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.ts.URL+Prefix+"events?topic=overview", nil)
	resp, err := r.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The first stream is served: a live event stream with an event on it.
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("the first stream: %d %q, want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	for !strings.HasPrefix(sc.Text(), "data: ") {
		if !sc.Scan() {
			t.Fatalf("the first stream ended without an event: %v", sc.Err())
		}
	}
	if code, _ := r.get(Prefix + "events?topic=overview"); code != http.StatusServiceUnavailable {
		t.Fatalf("a second stream over the bound: %d, want 503", code)
	}
	// Closing the first frees its place.
	cancel()
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.ts.URL+Prefix+"events?topic=overview", nil)
		resp, err := r.c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("a stream after the first closed: %d", resp.StatusCode)
		}
		return nil
	})
}
