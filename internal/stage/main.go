package stage

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
)

// Main is the body of every services/<stage>/main.go: flags with TOOLGATE_*
// defaults (read through getenv, which main passes in), run the one stage b
// binds until SIGTERM, drain, exit. It returns the process exit code. Only
// b's code is reachable from it, so the binary links no other gate.
func Main(b Binding, args []string, getenv func(string) string) int {
	stageName := b.name
	fs := flag.NewFlagSet(stageName, flag.ContinueOnError)
	flagged := Flags(fs, getenv, ServiceDefaults())
	if err := fs.Parse(args); err != nil {
		return 2
	}
	f, err := flagged()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", stageName, err)
		return 2
	}
	lv, err := zerolog.ParseLevel(f.LogLevel)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: --log-level: %v\n", stageName, err)
		return 2
	}
	cfg := f.Config
	cfg.Stages = []string{stageName}
	if err := cfg.Validate(); err != nil { // before connecting: a usage error
		fmt.Fprintf(os.Stderr, "%s: %v\n", stageName, err)
		return 2
	}
	cfg.Log = zerolog.New(os.Stderr).Level(lv).With().Timestamp().Str("service", stageName).Logger()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, map[string]Binding{stageName: b}, nil); err != nil {
		cfg.Log.Error().Err(err).Msg("stopped")
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
