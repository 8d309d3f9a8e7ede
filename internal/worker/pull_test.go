package worker

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
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

// A pull request lost on its way to the server, measured: a proxy between
// the worker and the server drops the worker's first pull request, so the
// server holds none and a message published after it waits. The worker
// notices the missing heartbeats and asks again within two heartbeats after
// its nudges (not at the request's expiry), and the message is handled only
// after that.
func TestWorker_a_lost_pull_request_is_asked_again_within_two_heartbeats(t *testing.T) {
	r := newRig(t, 30*time.Second, 5)
	p := newPullDropper(t, r.js.Conn().ConnectedUrl())
	nc, err := nats.Connect(p.url(), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	start(t, rig{js: js, ctx: r.ctx}, Config{}, echo)
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if p.pulls() == 0 {
			return errors.New("the worker sent no pull request yet")
		}
		return nil
	})
	r.publish(t, "in.a", "a")
	var handled time.Time
	testenv.Eventually(t, 3*pullExpiry, 10*time.Millisecond, func() error {
		if r.count(t, "OUT", "out.a") != 1 {
			return errors.New("in.a not handled yet")
		}
		handled = time.Now()
		return nil
	})
	dropped, again := p.times()
	if again.IsZero() {
		t.Fatal("the message was handled without a second pull request: none was lost")
	}
	if handled.Before(again) {
		t.Fatalf("handled at %v, before the pull request asked again at %v: the lost request was not the only one", handled, again)
	}
	// The worker first nudges the iterator with short waits (pull.go: the
	// nats.go race), each restarting the heartbeat timer, then waits
	// unbounded: a lost request is noticed two heartbeats after the nudges.
	var nudges time.Duration
	for d := pullNudge; d <= pullNudgeMax; d *= 2 {
		nudges += d
	}
	if d, bound := again.Sub(dropped), nudges+2*pullHeartbeat; d > bound+time.Second {
		t.Fatalf("asked again %v after the request was lost, want within the nudges and two heartbeats (%v)", d, bound)
	}
	t.Logf("lost request noticed after %v, message handled %v after it was lost", again.Sub(dropped), handled.Sub(dropped))
}

// pullDropper is a TCP proxy to a NATS server that drops the first pull
// request ($JS.API.CONSUMER.MSG.NEXT.>) a client publishes through it and
// passes everything else.
type pullDropper struct {
	ln      net.Listener
	mu      sync.Mutex
	n       int       // pull requests seen
	dropped time.Time // when the first was dropped
	again   time.Time // when the next was passed
}

func newPullDropper(t *testing.T, server string) *pullDropper {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pullDropper{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", u.Host)
			if err != nil {
				c.Close()
				return
			}
			t.Cleanup(func() { c.Close(); s.Close() })
			go func() { _, _ = io.Copy(c, s) }()
			go p.forward(s, c)
		}
	}()
	return p
}

func (p *pullDropper) url() string { return "nats://" + p.ln.Addr().String() }

// forward copies the client's protocol to the server one operation at a
// time, leaving out the first pull request.
func (p *pullDropper) forward(dst io.Writer, src io.Reader) {
	br := bufio.NewReader(src)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		op := line
		f := strings.Fields(string(line))
		if len(f) >= 3 && (strings.EqualFold(f[0], "PUB") || strings.EqualFold(f[0], "HPUB")) {
			size, err := strconv.Atoi(f[len(f)-1])
			if err != nil {
				return
			}
			payload := make([]byte, size+2)
			if _, err := io.ReadFull(br, payload); err != nil {
				return
			}
			op = append(op, payload...)
			if strings.HasPrefix(f[1], "$JS.API.CONSUMER.MSG.NEXT.") && p.pull() {
				continue
			}
		}
		if _, err := dst.Write(op); err != nil {
			return
		}
	}
}

// pull counts a pull request and reports whether to drop it.
func (p *pullDropper) pull() (drop bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	switch p.n {
	case 1:
		p.dropped = time.Now()
		return true
	case 2:
		p.again = time.Now()
	}
	return false
}

func (p *pullDropper) pulls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

func (p *pullDropper) times() (dropped, again time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped, p.again
}
