package httpingest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/identity"
	"github.com/toolgate/toolgate/internal/natslog"
	"github.com/toolgate/toolgate/internal/secrets"
	"github.com/toolgate/toolgate/internal/stage"
)

// DefaultAddr is where the HTTP ingest listens unless told: loopback.
const DefaultAddr = "127.0.0.1:8090"

// Main is the body of services/ingest-http: flags with TOOLGATE_* defaults,
// connect as one NATS user, serve until SIGTERM. It returns the exit code.
func Main(args []string, getenv func(string) string) int {
	fs := flag.NewFlagSet("ingest-http", flag.ContinueOnError)
	def := func(k, v string) string { return stage.EnvOr(getenv, k, v) }
	addr := fs.String("listen", def("TOOLGATE_INGEST_HTTP", DefaultAddr), "HTTP address (TOOLGATE_INGEST_HTTP); loopback by default: put a TLS proxy in front to expose it")
	url := fs.String("nats", def("TOOLGATE_NATS_URL", "nats://127.0.0.1:4222"), "NATS server URL (TOOLGATE_NATS_URL)")
	user := fs.String("nats-user", def("TOOLGATE_NATS_USER", ""), "NATS user, a producer user: producer, or producer-<tenant> (TOOLGATE_NATS_USER; password in TOOLGATE_NATS_PASSWORD)")
	tenants := fs.String("tenants", def("TOOLGATE_INGEST_TENANTS", ""), "tenants whose results the NATS user reads, comma separated, '*' for all (admin or no authentication); default: the tenant of a producer-<tenant> user, else none (the tenant-less producer)")
	maxWait := fs.Duration("max-wait", DefaultMaxWait, "the longest ?wait= of a long poll")
	keep := fs.Duration("keep", DefaultKeep, "how long outcomes stay readable after they were published")
	secretsDir := fs.String("secrets", secrets.Dir(getenv), "directory of the producers' bearer tokens, "+TokenFile("producer")+" and "+TokenFile("producer-<tenant>")+", made there once (TOOLGATE_SECRETS)")
	level := fs.String("log-level", def("TOOLGATE_LOG_LEVEL", "info"), "debug, info, warn, error (TOOLGATE_LOG_LEVEL)")
	var sc stage.Config
	idFlags := stage.IdentityFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := idFlags(&sc); err != nil {
		fmt.Fprintln(os.Stderr, "ingest-http:", err)
		return 2
	}
	lv, err := zerolog.ParseLevel(*level)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingest-http: --log-level:", err)
		return 2
	}
	log := zerolog.New(os.Stderr).Level(lv).With().Timestamp().Str("service", "ingest-http").Logger()
	served := tenantsOf(*tenants, *user)
	var opts []nats.Option
	if *user != "" {
		opts = authz.ClientOptions(*user, getenv("TOOLGATE_NATS_PASSWORD"))
	}
	nc, err := nats.Connect(*url, append(opts, nats.MaxReconnects(-1), nats.Name("toolgate ingest-http"), nats.ErrorHandler(natslog.AsyncErrors(log, natslog.Every)))...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ingest-http: connect to %s: %v\n", *url, err)
		return 1
	}
	defer nc.Drain()
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingest-http:", err)
		return 1
	}
	creds, err := EnsureCredentials(*secretsDir, credentialTenants(served, getenv("TOOLGATE_TENANTS")))
	if err != nil {
		fmt.Fprintln(os.Stderr, "ingest-http:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, *addr, sc.Identity, Config{Sources: []Source{{Tenants: served, JS: js}}, Credentials: creds, MaxWait: *maxWait, Keep: *keep, Log: log}); err != nil {
		log.Error().Err(err).Msg("stopped")
		return 1
	}
	return 0
}

// Run verifies identity with idc (when enabled), binds addr and serves cfg
// until ctx is done.
func Run(ctx context.Context, addr string, idc identity.Config, cfg Config) error {
	if idc.Enabled() {
		v, err := identity.New(ctx, idc)
		if err != nil {
			return err
		}
		cfg.Verifier = v
	}
	s, err := New(cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	l, err := Listen(addr)
	if err != nil {
		return err
	}
	mode := "a producer's bearer token, or the identity issuer's JWT (Toolgate-Token)"
	if cfg.Verifier == nil {
		mode = "a producer's bearer token (Authorization: Bearer)"
	}
	cfg.Log.Info().Str("addr", l.Addr().String()).Str("authentication", mode).Dur("max_wait", s.cfg.MaxWait).Int64("max_body", s.cfg.MaxBody).
		Msg("HTTP ingest: POST /v1/responses, GET /v1/responses/{id}/outcomes?wait=10s")
	LogCredentials(cfg.Log, cfg.Credentials)
	return s.Serve(ctx, l)
}

// credentialTenants is who gets a bearer token: each tenant served, and
// where the ingest serves every tenant ('*'), the tenant-less producer and
// each tenant of TOOLGATE_TENANTS (the deployment's list).
func credentialTenants(served []string, all string) []string {
	var out []string
	for _, t := range served {
		if t == AnyTenant {
			out = append(append(out, ""), authz.ParseTenants(all)...)
		} else {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// tenantsOf is --tenants, or the tenant a producer-<tenant> user is for.
func tenantsOf(flagValue, user string) []string {
	if t := stage.SplitList(flagValue); len(t) > 0 {
		return t
	}
	if rest, ok := strings.CutPrefix(user, authz.Producer+"-"); ok {
		return []string{rest}
	}
	return []string{""}
}
