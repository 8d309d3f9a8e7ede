package stage

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/streams"
)

// Main is the body of every services/<stage>/main.go: flags with TOOLGATE_*
// defaults (read through getenv, which main passes in), run until SIGTERM,
// drain, exit. It returns the process exit code.
func Main(stageName string, args []string, getenv func(string) string) int {
	def := func(k, d string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return d
	}
	fs := flag.NewFlagSet(stageName, flag.ContinueOnError)
	natsURL := fs.String("nats", def("TOOLGATE_NATS_URL", "nats://127.0.0.1:4222"), "NATS server URL (TOOLGATE_NATS_URL)")
	redisURL := fs.String("redis", def("TOOLGATE_REDIS_URL", ""), "Redis URL for idempotency keys (TOOLGATE_REDIS_URL; execute only)")
	httpAddr := fs.String("http", def("TOOLGATE_HTTP_ADDR", ":8080"), "/healthz and /readyz address (TOOLGATE_HTTP_ADDR)")
	level := fs.String("log-level", def("TOOLGATE_LOG_LEVEL", "info"), "debug, info, warn, error (TOOLGATE_LOG_LEVEL)")
	ensure := fs.Bool("ensure", def("TOOLGATE_ENSURE", "true") == "true", "create or update streams, buckets and consumers at start (TOOLGATE_ENSURE); false when an admin applies them and this stage runs as a least-privilege NATS user")
	user := fs.String("nats-user", def("TOOLGATE_NATS_USER", ""), "NATS user, normally the stage name (TOOLGATE_NATS_USER); the password is read from TOOLGATE_NATS_PASSWORD")
	defReplicas, err := strconv.Atoi(def("TOOLGATE_STREAM_REPLICAS", "1"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: TOOLGATE_STREAM_REPLICAS: want a number of replicas (1 or 3): %v\n", stageName, err)
		return 2
	}
	replicas := fs.Int("stream-replicas", defReplicas, "replicas of the streams and buckets this stage creates (TOOLGATE_STREAM_REPLICAS)")
	idle := fs.Duration("stream-idle-timeout", 0, "a streamed response with no event for this long ends transport_incomplete; default 60s (TOOLGATE_STREAM_IDLE_TIMEOUT)")
	maxEvents := fs.Int("stream-max-events", 0, "the most events, and the highest Toolgate-Seq, one streamed response may have; an event past it is refused and dead-lettered; default 10000 (TOOLGATE_STREAM_MAX_EVENTS)")
	ackWait := fs.Duration("ack-wait", 0, "how long a delivery may stay unacked before it is redelivered, and the grace added to a tool's timeout in an execute claim's lease; default 30s (TOOLGATE_ACK_WAIT; every stage of one deployment must agree)")
	tolerant := fs.String("tolerant-providers", def("TOOLGATE_TOLERANT_PROVIDERS", ""), "providers whose responses always get recovery of calls written as text, comma separated, e.g. ollama (TOOLGATE_TOLERANT_PROVIDERS)")
	repairConfig := RepairFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *idle == 0 && getenv("TOOLGATE_STREAM_IDLE_TIMEOUT") != "" {
		if *idle, err = time.ParseDuration(getenv("TOOLGATE_STREAM_IDLE_TIMEOUT")); err != nil {
			fmt.Fprintf(os.Stderr, "%s: TOOLGATE_STREAM_IDLE_TIMEOUT: %v\n", stageName, err)
			return 2
		}
	}
	if *maxEvents == 0 && getenv("TOOLGATE_STREAM_MAX_EVENTS") != "" {
		if *maxEvents, err = strconv.Atoi(getenv("TOOLGATE_STREAM_MAX_EVENTS")); err != nil || *maxEvents < 1 {
			fmt.Fprintf(os.Stderr, "%s: TOOLGATE_STREAM_MAX_EVENTS: want a positive number of events such as 10000\n", stageName)
			return 2
		}
	}
	if *maxEvents < 0 {
		fmt.Fprintf(os.Stderr, "%s: --stream-max-events: want a positive number of events such as 10000\n", stageName)
		return 2
	}
	if *ackWait == 0 && getenv("TOOLGATE_ACK_WAIT") != "" {
		if *ackWait, err = time.ParseDuration(getenv("TOOLGATE_ACK_WAIT")); err != nil {
			fmt.Fprintf(os.Stderr, "%s: TOOLGATE_ACK_WAIT: want a duration such as 30s: %v\n", stageName, err)
			return 2
		}
	}
	repair, err := repairConfig()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", stageName, err)
		return 2
	}
	settings := streams.DefaultSettings()
	settings.Replicas = *replicas
	if *ackWait > 0 {
		settings.AckWait = *ackWait
	}
	var natsOpts []nats.Option
	if *user != "" {
		natsOpts = authz.ClientOptions(*user, getenv("TOOLGATE_NATS_PASSWORD"))
	}
	lv, err := zerolog.ParseLevel(*level)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: --log-level: %v\n", stageName, err)
		return 2
	}
	log := zerolog.New(os.Stderr).Level(lv).With().Timestamp().Str("service", stageName).Logger()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err = Run(ctx, Config{
		NATSURL: *natsURL, NATSOpts: natsOpts, RedisURL: *redisURL, Stages: []string{stageName}, HTTPAddr: *httpAddr,
		Settings: settings, SkipEnsure: !*ensure, Repair: repair, Log: log, StreamIdle: *idle, StreamMaxEvents: *maxEvents, TolerantProviders: SplitList(*tolerant),
	}, nil)
	if err != nil {
		log.Error().Err(err).Msg("stopped")
		return 1
	}
	return 0
}

// SplitList splits a comma-separated setting, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
