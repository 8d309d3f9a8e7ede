package run

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	webconsole "github.com/toolgate/toolgate/internal/console"
	"github.com/toolgate/toolgate/internal/health"
	"github.com/toolgate/toolgate/internal/secrets"
	"github.com/toolgate/toolgate/internal/stage"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// ConsoleCmd is `toolgate console`: the operator console as its own
// process, connected as the least-privilege NATS user console, serving
// /console/ on --listen until SIGINT or SIGTERM.
func ConsoleCmd(args []string) error {
	fs := cmdutil.WithUsage(flag.NewFlagSet("console", flag.ContinueOnError), "console", "")
	listen := fs.String("listen", cmdutil.Env("TOOLGATE_CONSOLE_LISTEN", "127.0.0.1:8095"), "address of the console (TOOLGATE_CONSOLE_LISTEN); every address needs a login")
	url := cmdutil.NATSFlag(fs)
	tokens := fs.String("tokens", os.Getenv("TOOLGATE_CONSOLE_TOKENS"), "token file, lines `<role> <name> <token>` with role viewer, approver or operator (TOOLGATE_CONSOLE_TOKENS); default: "+webconsole.TokenFile+" in the secrets directory (TOOLGATE_SECRETS), which toolgate up makes")
	level := fs.String("log-level", cmdutil.Env("TOOLGATE_LOG_LEVEL", "info"), "log level (TOOLGATE_LOG_LEVEL)")
	ops, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return cmdutil.UsageError("console takes no operands (got %q)", cmdutil.Printable(ops[0]))
	}
	log, err := logger(*level)
	if err != nil {
		return err
	}
	cfg, file, err := consoleConfig(*tokens, secrets.Dir(os.Getenv), log)
	if err != nil {
		return err
	}
	// Bound first: a taken address stops the command before it connects.
	l, err := health.Listen(*listen)
	if err != nil {
		return fmt.Errorf("console: --listen %s: %w", *listen, errors.Unwrap(err))
	}
	nc, js, err := consoleConnect(*url)
	if err != nil {
		l.Close()
		return err
	}
	defer nc.Close()
	cfg.JS, cfg.NC = js, nc
	srv, err := webconsole.New(cfg)
	if err != nil {
		l.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); srv.Close() }()
	ready := func() error {
		if !nc.IsConnected() {
			return errors.New("NATS is not connected")
		}
		return nil
	}
	log.Info().Str("listen", *listen).Str("nats", nc.ConnectedUrlRedacted()).Str("tokens", file).Msg("console: serving http://" + *listen + webconsole.Prefix + "; log in with a token from " + file)
	return health.ServeListener(ctx, l, stage.Mount(health.Handler(ready, nil), consoleRoutes(srv)))
}

// consoleConfig is the console's access: the tokens of file, else of the
// token file toolgate up keeps in secretsDir; with neither there is no
// console (every console needs a login). It returns the file read.
func consoleConfig(file, secretsDir string, log zerolog.Logger) (webconsole.Config, string, error) {
	cfg := webconsole.Config{Log: log}
	if file == "" {
		up := filepath.Join(secretsDir, webconsole.TokenFile)
		if _, err := os.Stat(up); err != nil {
			return cfg, "", fmt.Errorf("console: no token file: every console needs a login. Give one with --tokens FILE (or TOOLGATE_CONSOLE_TOKENS), lines `<role> <name> <token>` with role viewer, approver or operator, or point TOOLGATE_SECRETS at the secrets directory of a toolgate up, whose %s it reads (%s: %v)", webconsole.TokenFile, up, errors.Unwrap(err))
		}
		file = up
	}
	roles, names, err := webconsole.LoadTokens(file)
	if err != nil {
		return cfg, file, err
	}
	if len(roles) == 0 {
		return cfg, file, fmt.Errorf("console: the token file %s lists no token (lines `<role> <name> <token>`)", file)
	}
	cfg.Tokens, cfg.Names = roles, names
	return cfg, file, nil
}

// consoleRoutes mounts srv at /console/ and sends / there.
func consoleRoutes(srv *webconsole.Server) func(*http.ServeMux) {
	return func(mux *http.ServeMux) {
		mux.Handle(webconsole.Prefix, srv.Handler())
		mux.Handle("GET /{$}", http.RedirectHandler(webconsole.Prefix, http.StatusSeeOther))
	}
}

// consoleConnect connects as the console user with the credentials
// connectAs would find (connect.go), for a long-running process: it
// reconnects for ever, and a permission violation is logged by the page
// that met it instead of ending the connection.
func consoleConnect(url string) (*nats.Conn, jetstream.JetStream, error) {
	c := cmdutil.CredentialsFor(url, authz.Console, os.Getenv)
	opts := []nats.Option{nats.Name("toolgate console"), nats.Timeout(5 * time.Second), nats.MaxReconnects(-1)}
	if c.User != "" {
		opts = append(opts, nats.CustomInboxPrefix(authz.InboxPrefix(c.User)))
		if c.Password != nil {
			opts = append(opts, nats.UserInfo(c.User, *c.Password))
		}
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, nil, c.Explain(url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}
