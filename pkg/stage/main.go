package stage

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"
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
	repairConfig := RepairFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	repair, err := repairConfig()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", stageName, err)
		return 2
	}
	lv, err := zerolog.ParseLevel(*level)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: --log-level: %v\n", stageName, err)
		return 2
	}
	log := zerolog.New(os.Stderr).Level(lv).With().Timestamp().Str("service", stageName).Logger()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err = Run(ctx, Config{NATSURL: *natsURL, RedisURL: *redisURL, Stages: []string{stageName}, HTTPAddr: *httpAddr, Repair: repair, Log: log}, nil)
	if err != nil {
		log.Error().Err(err).Msg("stopped")
		return 1
	}
	return 0
}
