package stage

import (
	"context"
	"flag"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/seal/sealtest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// flagged builds the stage configuration from args and env under d.
func flagged(t *testing.T, d Defaults, env map[string]string, args ...string) Flagged {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	build := Flags(fs, func(k string) string { return env[k] }, d)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	f, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestServiceDefaults_bind_health_and_metrics_to_loopback(t *testing.T) {
	f := flagged(t, ServiceDefaults(), nil)
	host, _, err := net.SplitHostPort(f.HTTPAddr)
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		t.Fatalf("--http defaults to %q, want a loopback address", f.HTTPAddr)
	}
}

func TestMain_execute_without_redis_refuses_to_start(t *testing.T) {
	srv := testenv.RunJetStream(t)
	env := map[string]string{"TOOLGATE_NATS_URL": srv.ClientURL(), "TOOLGATE_HTTP_ADDR": ""}
	done := make(chan int, 1)
	go func() { done <- Main(BindExecute(), nil, func(k string) string { return env[k] }) }()
	select {
	case code := <-done:
		if code != 2 {
			t.Fatalf("execute without Redis: Main returned %d, want 2 (refused before start)", code)
		}
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(syscall.Getpid(), syscall.SIGTERM) // Main is running and catches it
		<-done
		t.Fatal("execute without Redis started")
	}
	f := flagged(t, ServiceDefaults(), env)
	cfg := f.Config
	cfg.Stages = []string{streams.Execute}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := Run(ctx, cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "--redis") || !strings.Contains(err.Error(), "--idem-store embedded") {
		t.Fatalf("Run = %v, want an error naming --redis and --idem-store embedded", err)
	}
	// Stages that keep no keys do not need Redis.
	cfg.Stages = []string{streams.Parse}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("parse without Redis: %v", err)
	}
}

func TestFlags_idem_store_choices(t *testing.T) {
	for _, c := range []struct {
		name string
		d    Defaults
		env  map[string]string
		args []string
		want string // "" : valid
	}{
		{"service, redis given", ServiceDefaults(), map[string]string{"TOOLGATE_REDIS_URL": "redis://127.0.0.1:6379/0"}, nil, ""},
		{"service, embedded asked for", ServiceDefaults(), nil, []string{"--idem-store", "embedded"}, ""},
		{"service, embedded by env", ServiceDefaults(), map[string]string{"TOOLGATE_IDEM_STORE": "embedded"}, nil, ""},
		{"service, nothing", ServiceDefaults(), nil, nil, "needs Redis"},
		{"up's defaults, nothing", Defaults{HTTPAddr: "127.0.0.1:8080"}, nil, nil, ""},
		{"up's defaults, redis asked for", Defaults{HTTPAddr: "127.0.0.1:8080"}, nil, []string{"--idem-store", "redis"}, "needs Redis"},
		{"both", ServiceDefaults(), nil, []string{"--idem-store", "embedded", "--redis", "redis://h:6379"}, "both given"},
		{"unknown", ServiceDefaults(), nil, []string{"--idem-store", "memcached"}, "want redis"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := flagged(t, c.d, c.env, c.args...).Config
			cfg.Stages = []string{streams.Execute}
			err := cfg.Validate()
			if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("Validate = %v, want %q", err, c.want)
			}
		})
	}
}

func TestRun_execute_with_idem_store_embedded_runs_without_redis(t *testing.T) {
	srv := testenv.RunJetStream(t)
	keys, _ := sealtest.Dir(t)
	env := map[string]string{"TOOLGATE_NATS_URL": srv.ClientURL(), "TOOLGATE_HTTP_ADDR": "", "TOOLGATE_SEAL_KEYS": keys}
	cfg := flagged(t, ServiceDefaults(), env, "--idem-store", "embedded").Config
	cfg.Stages = []string{streams.Execute}
	cfg.Exec.Signer = testExecSigner()
	cfg.Log = zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- Run(ctx, cfg, ready) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("execute with --idem-store embedded stopped: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("execute with --idem-store embedded never became ready")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
