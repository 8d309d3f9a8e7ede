package run

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/natsmap/embedded"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
	"github.com/toolgate/toolgate/internal/cli/tools"
)

// upFlags are up's own flags; the stage flags come from stage.Flags, so up
// has every flag of services/<stage> but --nats (its NATS is embedded).
type upFlags struct {
	FS                      *flag.FlagSet
	listen, data, toolsFile *string
	ingest                  *string // --ingest-http, up_httpingest.go
	trust                   trustFlags
	stage                   func() (stage.Flagged, error)
}

func NewUpFlags(getenv func(string) string) upFlags {
	fs := cmdutil.WithUsage(flag.NewFlagSet("up", flag.ContinueOnError), "up", "")
	return upFlags{
		FS:        fs,
		listen:    fs.String("listen", stage.EnvOr(getenv, "TOOLGATE_LISTEN", "127.0.0.1:4222"), "address of the embedded NATS server, for producers and executors (TOOLGATE_LISTEN); 0.0.0.0:4222 in a container, where authentication stays on"),
		data:      fs.String("data", stage.EnvOr(getenv, "TOOLGATE_DATA", ".toolgate/data"), "JetStream storage directory (TOOLGATE_DATA); one toolgate up at a time holds it (lock file "+lockFile+")"),
		toolsFile: fs.String("tools", "", "tool definitions to apply at start (YAML or JSON)"),
		ingest:    ingestHTTPFlag(fs, getenv),
		trust:     newTrustFlags(fs, getenv), // up_leastpriv.go
		stage:     stage.Flags(fs, getenv, stage.Defaults{HTTPAddr: "127.0.0.1:8080"}),
	}
}

// Up runs every stage in one process over an embedded NATS server with
// JetStream on local disk: the zero-setup default.
func Up(args []string) error {
	uf := NewUpFlags(os.Getenv)
	listen, data, toolsFile := uf.listen, uf.data, uf.toolsFile
	ingestAddr := uf.ingest
	ops, err := cmdutil.ParseFlags(uf.FS, args)
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return cmdutil.UsageError("up takes no operands (got %q); tool definitions go in --tools FILE", ops[0])
	}
	flagged, err := uf.stage()
	if err != nil {
		return err
	}
	// The tenants of --tenants get lanes of their own, and the stage users
	// their lane durables.
	flagged.Settings.Fair.Tenants = authz.ParseTenants(*uf.trust.tenant)
	*uf.trust.lanes = flagged.Settings.Fair.Lanes
	// Grants up to deploy/'s P at least: a lowered P's streams still drain.
	*uf.trust.partitions = max(flagged.Settings.Fair.PartitionCount(), authz.DeployPartitions)
	log, err := logger(flagged.LogLevel)
	if err != nil {
		return err
	}
	host, portStr, err := net.SplitHostPort(*listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", *listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return fmt.Errorf("--listen %q: port: %w", *listen, err)
	}
	dir, _ := filepath.Abs(*data)
	// Before the address check: a second up on this store is told who
	// holds it, not that the port is taken.
	release, err := lockData(dir)
	if err != nil {
		return err
	}
	defer release()
	if l, err := net.Listen("tcp", *listen); err != nil {
		return fmt.Errorf("--listen %s is taken (%v): another NATS server may run there; pick another address, e.g. --listen 127.0.0.1:4322", *listen, err)
	} else {
		l.Close()
	}
	opts := &server.Options{
		ServerName: "toolgate-embedded", Host: host, Port: port, JetStream: true, StoreDir: dir,
		MaxPayload: 16 << 20, NoSigs: true,
	}
	lp, err := uf.trust.setup(opts, log) // nil: --insecure
	if err != nil {
		return err
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return fmt.Errorf("embedded NATS: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		return errors.New("embedded NATS did not start within 10s")
	}
	defer ns.Shutdown()
	// The ingest's partitions' mappings (wire.Mappings), as
	// deploy/'s server is configured with its P.
	if err := embedded.Apply(ns, flagged.Settings.Fair.PartitionCount()); err != nil {
		return err
	}
	log.Info().Str("listen", *listen).Str("data", dir).Msg("embedded NATS with JetStream running")
	if lp != nil {
		lp.attach(ns, log) // executor groups follow the tools applied
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	adminURL := ns.ClientURL()
	if lp != nil {
		adminURL = lp.AdminURL(ns.ClientURL())
	}
	if *toolsFile != "" {
		if err := applyFile(adminURL, *toolsFile); err != nil {
			return err
		}
	}
	cfg := flagged.Config
	cfg.NATSURL, cfg.Stages, cfg.Log = ns.ClientURL(), streams.Names(), log
	// The executor signing pair, made once: executors verify with its .pub.
	if err := cfg.Exec.EnsureKey(*uf.trust.secrets); err != nil {
		return err
	}
	if err := startIngestHTTP(ctx, *ingestAddr, ns.ClientURL(), lp, uf.trust, cfg.Identity, cfg); err != nil {
		return err
	}
	if err := upConsole(ctx, &cfg, ns.ClientURL(), lp, *uf.trust.secrets, log); err != nil { // up_console.go
		return err
	}
	if lp != nil {
		err = lp.run(ctx, adminURL, cfg)
	} else {
		// Seal keys made once in the secrets directory, as in least
		// privilege: a call sealed before a restart (waiting for a human,
		// a dead letter) still runs after it.
		if cfg.Seals == nil && cfg.SealKeys == "" {
			if cfg.Seals, err = seal.Ensure(*uf.trust.secrets, cfg.Stages); err != nil {
				return err
			}
		}
		err = stage.Run(ctx, cfg, nil)
	}
	ns.Shutdown()
	ns.WaitForShutdown()
	return err
}

// applyFile applies the tools in file as `toolgate tools apply -f FILE`
// does, with its report (added/changed/unchanged) and its warnings (a tool
// without a policy): up --tools and bench read like the command.
func applyFile(url, file string) error {
	return tools.ToolsApply([]string{"--nats", url, "-f", file}, tools.ToolsIO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
}

func logger(level string) (zerolog.Logger, error) {
	lv, err := zerolog.ParseLevel(level)
	if err != nil {
		return zerolog.Logger{}, fmt.Errorf("--log-level %q: %w", level, err)
	}
	return newLogger(os.Stderr, cmdutil.IsTerminal(os.Stderr)).Level(lv), nil
}

// newLogger writes human-readable lines to w, coloured only on a terminal
// (a log file or a CI log gets no ANSI escapes), with millisecond
// timestamps: zerolog's own Timestamp() keeps whole seconds, so every line
// read ".000".
func newLogger(w io.Writer, colour bool) zerolog.Logger {
	cw := zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05.000", NoColor: !colour}
	return zerolog.New(cw).Hook(zerolog.HookFunc(func(e *zerolog.Event, _ zerolog.Level, _ string) {
		e.Str(zerolog.TimestampFieldName, time.Now().Format(time.RFC3339Nano))
	}))
}
