package run

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/health"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/natsusers"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/secrets"
	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
	"github.com/toolgate/toolgate/internal/cli/tools"
)

// trustFlags are up's authentication flags. Authenticated least privilege
// is the default; --insecure is the open mode of old, for loopback only.
type trustFlags struct {
	insecure, leastPriv     *bool
	secrets, groups, tenant *string
	// lanes is the stage flags' --lanes, set by up once they are parsed:
	// accumulate's user is granted its lane durables by name (the gate
	// stages' users their own lanes' stream, whatever L).
	lanes *int
	// partitions is the stage flags' --partitions, set by up likewise.
	partitions *int
}

func newTrustFlags(fs *flag.FlagSet, getenv func(string) string) trustFlags {
	return trustFlags{
		insecure:   fs.Bool("insecure", false, "run the embedded NATS server without authentication: any local process may execute tools, purge streams and apply tool definitions (refused unless --listen is a loopback address)"),
		leastPriv:  fs.Bool("least-privilege", false, "accepted for old scripts: least privilege is the default"),
		secrets:    fs.String("secrets", secrets.Dir(getenv), "directory of the generated NATS passwords, nats-<user>.password, and of the console's token file, console-tokens (TOOLGATE_SECRETS); the CLI, make run, the example executor and toolgate console read them there"),
		groups:     fs.String("executor-groups", stage.EnvOr(getenv, "TOOLGATE_EXECUTOR_GROUPS", authz.DefaultGroups()), "executor credentials: group=tool,tool;group=tool — user executor-<group> may serve only those tools (TOOLGATE_EXECUTOR_GROUPS)"),
		tenant:     fs.String("tenants", getenv("TOOLGATE_TENANTS"), "tenants with a producer user each, producer-<tenant>, that reads only its tenant's results, each in a fairness lane of its own up to --lanes (TOOLGATE_TENANTS, comma-separated); user producer has the tenant-less ones"),
		lanes:      new(int),
		partitions: new(int),
	}
}

// dir is the secrets directory (--secrets): the NATS passwords, the seal
// keys and the executor signing key pair of this toolgate up.
func (tf trustFlags) dir() string { return *tf.secrets }

// config is the users the flags ask for.
func (tf trustFlags) config() (authz.Config, error) {
	groups, err := authz.ParseGroups(*tf.groups)
	if err != nil {
		return authz.Config{}, err
	}
	c := authz.Config{Groups: groups, Tenants: authz.ParseTenants(*tf.tenant), Lanes: *tf.lanes, Partitions: *tf.partitions}
	return c, c.Validate()
}

// setup secures opts unless --insecure, which it refuses on an address
// other than loopback. It returns nil for the open mode.
func (tf trustFlags) setup(opts *server.Options, log zerolog.Logger) (*LeastPrivilege, error) {
	loopback := isLoopback(opts.Host)
	if *tf.insecure {
		if *tf.leastPriv {
			return nil, errors.New("up: --insecure and --least-privilege contradict each other; least privilege is the default, drop --insecure")
		}
		if !loopback {
			return nil, fmt.Errorf("up: --insecure is refused on --listen %s: without authentication anyone who reaches it may execute tools; listen on 127.0.0.1, or drop --insecure", net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)))
		}
		log.Warn().Msg("INSECURE: the embedded NATS server has no authentication; any local process may execute tools, purge streams and apply tool definitions")
		return nil, nil
	}
	c, err := tf.config()
	if err != nil {
		return nil, err
	}
	lp, err := NewLeastPrivilege(opts, c, *tf.secrets, loopback)
	if err != nil {
		return nil, err
	}
	lp.groups, lp.groupsFlag, lp.config = c.Groups, *tf.groups, c
	anon := "refused (not a loopback address)"
	if loopback {
		anon = "may only publish responses"
	}
	log.Info().Str("secrets", lp.dir).Strs("users", c.Names()).Str("unauthenticated", anon).
		Msg("NATS authentication: every stage, executor group and producer has its own user; passwords in the secrets directory (nats-<user>.password)")
	return lp, nil
}

// isLoopback reports whether host only listens on the loopback interface.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LeastPrivilege is the default `toolgate up`: the embedded server gets the
// users of internal/authz with passwords generated once into the secrets
// directory, every stage connects as its own user, and an unauthenticated
// local connection is the client user (publish responses, nothing else).
type LeastPrivilege struct {
	passwords map[string]string
	dir       string
	// groups are the executor groups (--executor-groups, as groupsFlag):
	// a tool none of them lists has no executor that may serve it.
	groups     []authz.Group
	groupsFlag string
	// opts and config are the server's options and users at start; live
	// (attach) keeps the executor groups in step with the tools applied.
	opts   *server.Options
	config authz.Config
	live   *tools.LiveGroups
}

// attach lets lp change the users of ns, the server started with lp's
// options: executor groups follow the tools applied (up_groups.go).
func (lp *LeastPrivilege) attach(ns *server.Server, log zerolog.Logger) {
	lp.live = tools.NewLiveGroups(ns, lp.opts, lp.config, lp.dir, lp.passwords, log)
}

// NewLeastPrivilege adds c's users to opts, their passwords read from dir
// (nats-<user>.password, mode 0600) or generated there on first start, so
// clients configured before a restart connect after it. With anon, a
// connection without credentials is the client user; without, it is
// refused.
func NewLeastPrivilege(opts *server.Options, c authz.Config, dir string, anon bool) (*LeastPrivilege, error) {
	lp := &LeastPrivilege{passwords: map[string]string{}, dir: dir, opts: opts, config: c}
	for _, u := range c.Names() {
		b, err := secrets.Ensure(dir, authz.PasswordFile(u), secrets.Random(16))
		if err != nil {
			return nil, fmt.Errorf("up: %w", err)
		}
		lp.passwords[u] = strings.TrimRight(string(b), "\r\n")
	}
	// Nobody logs in as the client: its password is never stored.
	pw, err := secrets.Random(16)()
	if err != nil {
		return nil, fmt.Errorf("up: %w", err)
	}
	lp.passwords[authz.Client] = strings.TrimSpace(string(pw))
	users, err := natsusers.ConfigUsers(c, lp.passwords)
	if err != nil {
		return nil, err
	}
	opts.Users = users
	if anon {
		opts.NoAuthUser = authz.Client
	}
	return lp, nil
}

// AdminURL is clientURL with the admin's credentials.
func (lp *LeastPrivilege) AdminURL(clientURL string) string {
	u, err := url.Parse(clientURL)
	if err != nil {
		return clientURL
	}
	u.User = url.UserPassword(authz.Admin, lp.passwords[authz.Admin])
	return u.String()
}

// run applies the topology as the admin, then runs one stage.Run per stage,
// each connected as that stage's user and unable to create anything, until
// ctx is done. cfg.HTTPAddr serves one /readyz for all of them.
func (lp *LeastPrivilege) run(ctx context.Context, adminURL string, cfg stage.Config) error {
	nc, js, err := cmdutil.Connect(adminURL)
	if err != nil {
		return err
	}
	actx, cancel := cmdutil.Timeout()
	s := streams.DefaultSettings()
	s.Fair = cfg.Settings.Fair
	err = streams.Ensure(actx, js, s)
	cancel()
	if err != nil {
		nc.Close()
		return err
	}
	// The admin connection stays for the coverage watch: a tool no
	// executor group lists gets a group of its own now and whenever it is
	// applied (up_groups.go), and tools apply asks which group serves it.
	defer nc.Close()
	var cover func(string) ([]tools.Coverage, error)
	if lp.live != nil {
		if _, err := lp.live.Serve(nc, js); err != nil {
			return err
		}
		cover = func(tool string) ([]tools.Coverage, error) { return lp.live.Cover([]string{tool}) }
	}
	go func() {
		if err := warnUncovered(ctx, js, lp.groups, lp.groupsFlag, cover, cfg.Log); err != nil && ctx.Err() == nil {
			cfg.Log.Warn().Err(err).Msg("cannot watch the tools for ones no executor group may serve")
		}
	}()
	if cfg.Seals == nil && cfg.SealKeys == "" {
		// Each stage.Run runs one stage, so none makes keys for itself:
		// they are made once in the secrets directory and kept.
		if cfg.Seals, err = seal.Ensure(lp.dir, streams.Names()); err != nil {
			return err
		}
	}
	var hl net.Listener
	if cfg.HTTPAddr != "" {
		// Bound before any stage starts: a taken address stops toolgate up
		// with a clear error instead of running on without health.
		if hl, err = health.Listen(cfg.HTTPAddr); err != nil {
			return err
		}
	}
	// One metrics set for every stage, served on /metrics beside /readyz.
	// The admin's watch comes first, so every stage's consumer, the dead
	// letters and the approvals are reported whatever each stage's user
	// may read. Before, this mode (the default up) served no /metrics.
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.New()
	}
	defer stage.WatchCluster(cfg.Metrics, streams.Names(), js)()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		errs    []error
		readies []chan struct{}
	)
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	for _, st := range streams.Names() {
		c := cfg
		c.Stages, c.HTTPAddr, c.SkipEnsure = []string{st}, "", true
		c.NATSOpts = append(append([]nats.Option(nil), cfg.NATSOpts...), authz.ClientOptions(st, lp.passwords[st])...)
		c.Log = cfg.Log.With().Str("stage", st).Logger()
		ready := make(chan struct{})
		readies = append(readies, ready)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := stage.Run(rctx, c, ready); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", st, err))
				mu.Unlock()
				stop() // one stage down takes the process down, as in one stage.Run
			}
		}()
	}
	go func() {
		check := func() error {
			for i, r := range readies {
				select {
				case <-r:
				default:
					return fmt.Errorf("stage %s is not ready", streams.Names()[i])
				}
			}
			return rctx.Err()
		}
		if err := health.ServeListener(rctx, hl, stage.Mount(health.Handler(check, map[string]http.Handler{"/metrics": cfg.Metrics.Handler()}), cfg.HTTPRoutes)); err != nil {
			cfg.Log.Error().Err(err).Str("addr", cfg.HTTPAddr).Msg("health endpoint")
		}
	}()
	wg.Wait()
	return errors.Join(errs...)
}
