package run

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"

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
// console user (lp nil: --insecure, no credentials). Every page needs a
// login: the tokens are TOOLGATE_CONSOLE_TOKENS's, else those of the token
// file kept in secretsDir, made on first start with one operator's token.
// Up prints where that file is rather than a login link: the token then
// never reaches a terminal or a log (make run's up.log, a CI log), it
// outlives restarts and serves every console reading the directory, and
// reading it takes what the NATS admin password beside it takes. On an
// --http address other than loopback the console is served only when
// TOOLGATE_CONSOLE_TOKENS names a file: a token sent over plain HTTP
// crosses the network, so that is a choice to make (with TLS in front),
// not a default. It stops when ctx is done.
func upConsole(ctx context.Context, cfg *stage.Config, natsURL string, lp *LeastPrivilege, secretsDir string, log zerolog.Logger) error {
	if cfg.HTTPAddr == "" {
		return nil
	}
	file := os.Getenv("TOOLGATE_CONSOLE_TOKENS")
	if file == "" {
		made, err := webconsole.EnsureTokenFile(secretsDir)
		if err != nil {
			return fmt.Errorf("up: %w", err)
		}
		if !loopbackAddr(cfg.HTTPAddr) {
			log.Warn().Str("http", cfg.HTTPAddr).Msg("console off: --http is not a loopback address and TOOLGATE_CONSOLE_TOKENS names no token file; to serve it there (behind TLS: a token crosses the network), set TOOLGATE_CONSOLE_TOKENS=" + made)
			return nil
		}
		file = made
	}
	ccfg, _, err := consoleConfig(file, secretsDir, log)
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
	log.Info().Str("url", "http://"+cfg.HTTPAddr+webconsole.Prefix).Str("tokens", file).
		Msg("console: open http://" + cfg.HTTPAddr + webconsole.Prefix + " and log in with a token from " + file + " (the third field of a line `<role> <name> <token>`)")
	return nil
}

// loopbackAddr reports whether a listen address binds loopback only
// (":8080" binds every interface).
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && host != "" && isLoopback(strings.Trim(host, "[]"))
}
