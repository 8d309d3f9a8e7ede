package natsproc

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/bench"
)

// One nats-server process, as `toolgate bench --nats embedded-process`
// runs it: JetStream on its client port, its counters on its monitoring
// port, and a process of its own whose peak RSS and CPU can be read apart
// from this one's; Stop ends it.
func TestStartServer_one_process_with_its_own_memory_and_counters(t *testing.T) {
	dir := t.TempDir()
	bin, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := StartServer(bin, dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	pid := s.PID()
	if pid <= 0 || bench.ProcPeakRSS(pid) <= 0 {
		t.Fatalf("pid %d, peak RSS %d: want a process of its own", pid, bench.ProcPeakRSS(pid))
	}
	nc, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ONE", Subjects: []string{"one"}}); err != nil {
		t.Fatal(err)
	}
	c := bench.Monitor{URL: s.MonitorURL()}
	v0, err := c.Varz(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := js.Publish(ctx, "one", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	v1, err := c.Varz(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := v1.InMsgs - v0.InMsgs; got < 20 {
		t.Fatalf("the monitoring port counted %d messages in over 20 publishes", got)
	}
	s.Stop()
	if s.PID() != 0 {
		t.Fatalf("pid %d still running after Stop", s.PID())
	}
}
