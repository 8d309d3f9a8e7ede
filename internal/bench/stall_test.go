package bench_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/bench"
)

// ackHold is a dialer whose connection stops reading while held: the
// server's publish acks wait, as they do when the server is busy in
// another process on a loaded machine.
type ackHold struct {
	mu   sync.Mutex
	gate chan struct{} // closed: reads go through
}

func (h *ackHold) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return &heldConn{Conn: c, h: h}, nil
}

func (h *ackHold) hold() { h.mu.Lock(); h.gate = make(chan struct{}); h.mu.Unlock() }

func (h *ackHold) release() { h.mu.Lock(); close(h.gate); h.gate = nil; h.mu.Unlock() }

type heldConn struct {
	net.Conn
	h *ackHold
}

func (c *heldConn) Read(p []byte) (int, error) {
	c.h.mu.Lock()
	g := c.h.gate
	c.h.mu.Unlock()
	if g != nil {
		<-g
	}
	return c.Conn.Read(p)
}

// The generator published each call once and gave up when the client
// held as many unacknowledged publishes as it allows for longer than
// the stall wait (200 ms): with the server in another process on a loaded
// machine, `toolgate bench --n 20000 --nats embedded-process` ended at
// step 2 with "stalled with too many outstanding async published
// messages". A stall is a pause, as in the ceiling: every call still runs.
func TestLoad_a_stalled_publish_waits_instead_of_failing_the_step(t *testing.T) {
	r := startRig(t)
	h := &ackHold{}
	nc, js := heldClient(t, r.NATS.URL(), h)
	h.hold()
	go func() { time.Sleep(time.Second); h.release() }()
	st, _, err := bench.LoadAs(context.Background(), nc, js, "", "stall-", 40, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Count != 40 {
		t.Fatalf("%d results, want 40", st.Count)
	}
}

// The cost curve's publishes are the generator's too: a stalled one waits.
func TestScenario_a_stalled_publish_waits_instead_of_failing_the_scenario(t *testing.T) {
	r := startRig(t)
	h := &ackHold{}
	nc, js := heldClient(t, r.NATS.URL(), h)
	target := r.Target
	target.NC, target.JS = nc, js
	count := map[string]int{"invoice-1": 10, "stream-500": 1} // each more publishes than 4
	for _, s := range bench.Scenarios() {
		n, ok := count[s.Name]
		if !ok {
			continue
		}
		h.hold()
		go func() { time.Sleep(time.Second); h.release() }()
		c, err := s.Run(context.Background(), target, "stall-", n)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if c.Calls != n {
			t.Fatalf("%s: %d calls, want %d", s.Name, c.Calls, n)
		}
	}
}

// heldClient connects through h, with room for 4 unacknowledged publishes.
func heldClient(t *testing.T, url string, h *ackHold) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url, nats.SetCustomDialer(h))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4))
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}
