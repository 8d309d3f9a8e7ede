package worker

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// A pull request the server no longer holds is noticed only when two
// heartbeats are missing. The worker's requests, read off the wire, expire
// within 10 s and ask for a heartbeat every 2 s, so a stage whose request
// was lost resumes within about 4 s; with the client's defaults (expires 30 s,
// heartbeat 15 s) a backlogged stage stood still for 30 s.
func TestWorker_pull_requests_ask_for_heartbeats_that_notice_a_lost_request_within_seconds(t *testing.T) {
	r := newRig(t, 30*time.Second, 5)
	nc := r.js.Conn()
	reqs := make(chan []byte, 16)
	sub, err := nc.Subscribe("$JS.API.CONSUMER.MSG.NEXT.IN.stage", func(m *nats.Msg) {
		select {
		case reqs <- m.Data:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	start(t, r, Config{}, echo)
	select {
	case data := <-reqs:
		var req struct {
			Batch     int           `json:"batch"`
			Expires   time.Duration `json:"expires"`
			Heartbeat time.Duration `json:"idle_heartbeat"`
		}
		if err := json.Unmarshal(data, &req); err != nil {
			t.Fatalf("pull request %s: %v", data, err)
		}
		if req.Expires <= 0 || req.Expires > 10*time.Second || req.Heartbeat <= 0 || req.Heartbeat > 2*time.Second {
			t.Fatalf("pull request %s: expires %v, heartbeat %v; want at most 10s and 2s", data, req.Expires, req.Heartbeat)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("saw no pull request")
	}
}
