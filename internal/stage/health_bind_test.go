package stage

import (
	"context"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// takenPort is an address another listener holds until the test ends.
func takenPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().String()
}

func TestRun_taken_health_port_stops_the_stage_with_a_clear_error(t *testing.T) {
	srv := testenv.RunJetStream(t)
	addr := takenPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err := Run(ctx, Config{NATSURL: srv.ClientURL(), Stages: []string{streams.Parse}, HTTPAddr: addr,
		Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)}, nil)
	want := "stage: --http " + addr + ": address already in use: choose another with --http or TOOLGATE_HTTP_ADDR"
	if err == nil || err.Error() != want {
		t.Fatalf("Run = %v, want %q", err, want)
	}
}

func TestMain_taken_health_port_exits_non_zero(t *testing.T) {
	srv := testenv.RunJetStream(t)
	addr := takenPort(t)
	env := map[string]string{"TOOLGATE_NATS_URL": srv.ClientURL(), "TOOLGATE_HTTP_ADDR": addr}
	done := make(chan int, 1)
	go func() { done <- Main(BindParse(), nil, func(k string) string { return env[k] }) }()
	select {
	case code := <-done:
		if code == 0 {
			t.Fatal("Main exited 0 without its health address")
		}
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(syscall.Getpid(), syscall.SIGTERM) // Main is running and catches it
		<-done
		t.Fatal("Main ran on without its health and metrics address")
	}
}

func TestMain_bad_stream_max_events_is_refused_before_start(t *testing.T) {
	for _, v := range []string{"many", "0", "-5"} {
		env := map[string]string{"TOOLGATE_NATS_URL": "nats://127.0.0.1:1", "TOOLGATE_STREAM_MAX_EVENTS": v}
		if code := Main(BindAccumulate(), nil, func(k string) string { return env[k] }); code != 2 {
			t.Errorf("TOOLGATE_STREAM_MAX_EVENTS=%q: Main returned %d, want 2 (a usage error)", v, code)
		}
	}
	if code := Main(BindAccumulate(), []string{"--stream-max-events", "-1"}, func(string) string { return "" }); code != 2 {
		t.Errorf("--stream-max-events -1: Main returned %d, want 2", code)
	}
}
