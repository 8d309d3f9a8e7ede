package main

import (
	"context"
	"os"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	webconsole "github.com/toolgate/toolgate/internal/console"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/stage"
)

// upConsole sets up the console toolgate up serves on its --http address
// (cfg.HTTPRoutes), connected to the embedded server at natsURL as the
// console user (lp nil: --insecure, no credentials). On an address other
// than loopback it needs TOOLGATE_CONSOLE_TOKENS; without, the console is
// left off with a warning, and up runs on. It stops when ctx is done.
func upConsole(ctx context.Context, cfg *stage.Config, natsURL string, lp *leastPrivilege, log zerolog.Logger) error {
	if cfg.HTTPAddr == "" {
		return nil
	}
	ccfg, err := consoleConfig(cfg.HTTPAddr, os.Getenv("TOOLGATE_CONSOLE_TOKENS"), log)
	if err != nil && ccfg.RequireAuth && len(ccfg.Tokens) == 0 {
		log.Warn().Str("http", cfg.HTTPAddr).Msg("console off: --http is not a loopback address and TOOLGATE_CONSOLE_TOKENS names no token file")
		return nil
	}
	if err != nil {
		return err
	}
	opts := []nats.Option{nats.Name("toolgate console"), nats.MaxReconnects(-1)}
	if lp != nil {
		opts = append(opts, authz.ClientOptions(authz.Console, lp.passwords[authz.Console])...)
	}
	// The stages of this process share one metrics set (one stage.Run, or
	// one per stage user in least privilege): its handler histogram times them.
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.New()
	}
	ccfg.Metrics = cfg.Metrics.Registry()
	nc, err := nats.Connect(natsURL, opts...)
	if err != nil {
		return err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return err
	}
	ccfg.JS, ccfg.NC = js, nc
	srv, err := webconsole.New(ccfg)
	if err != nil {
		nc.Close()
		return err
	}
	go func() { <-ctx.Done(); srv.Close(); nc.Close() }()
	cfg.HTTPRoutes = consoleRoutes(srv)
	log.Info().Str("url", "http://"+cfg.HTTPAddr+webconsole.Prefix).Bool("login", len(ccfg.Tokens) > 0).Msg("console")
	return nil
}
