package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/internal/streams"
	"github.com/toolgate/toolgate/internal/tool"
)

// up runs every stage in one process over an embedded NATS server with
// JetStream on local disk: the zero-setup default.
func up(args []string) error {
	fs := flag.NewFlagSet("up", flag.ExitOnError)
	listen := fs.String("listen", env("TOOLGATE_LISTEN", "127.0.0.1:4222"), "address of the embedded NATS server, for producers and executors")
	data := fs.String("data", env("TOOLGATE_DATA", ".toolgate/data"), "JetStream storage directory")
	toolsFile := fs.String("tools", "", "tool definitions to apply at start (YAML or JSON)")
	httpAddr := fs.String("http", env("TOOLGATE_HTTP_ADDR", "127.0.0.1:8080"), "/healthz and /readyz address; empty: none")
	redisURL := fs.String("redis", env("TOOLGATE_REDIS_URL", ""), "Redis URL for idempotency keys (TOOLGATE_REDIS_URL); empty: a JetStream key-value bucket")
	tolerant := fs.String("tolerant-providers", env("TOOLGATE_TOLERANT_PROVIDERS", ""), "providers whose responses always get recovery of calls written as text, comma separated, e.g. ollama")
	level := fs.String("log-level", env("TOOLGATE_LOG_LEVEL", "info"), "debug, info, warn, error")
	leastPriv := fs.Bool("least-privilege", false, "run each stage as its own NATS user with the permissions of deploy/ (internal/authz); local clients without credentials may only publish responses, read results and serve executors; the admin password is written to DIR/../nats-admin-password")
	repairConfig := stage.RepairFlags(fs, os.Getenv)
	fs.Parse(args)
	log, err := logger(*level)
	if err != nil {
		return err
	}
	repair, err := repairConfig()
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
	if l, err := net.Listen("tcp", *listen); err != nil {
		return fmt.Errorf("--listen %s is taken (%v): another NATS server may run there; pick another address, e.g. --listen 127.0.0.1:4322", *listen, err)
	} else {
		l.Close()
	}
	dir, _ := filepath.Abs(*data)
	opts := &server.Options{
		ServerName: "toolgate-embedded", Host: host, Port: port, JetStream: true, StoreDir: dir,
		MaxPayload: 16 << 20, NoSigs: true,
	}
	var lp *leastPrivilege
	if *leastPriv {
		if lp, err = newLeastPrivilege(opts, filepath.Dir(dir)); err != nil {
			return err
		}
		log.Info().Str("admin_password_file", lp.adminFile).Msg("least privilege: every stage runs as its own NATS user")
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
	log.Info().Str("listen", *listen).Str("data", dir).Msg("embedded NATS with JetStream running")

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	adminURL := ns.ClientURL()
	if lp != nil {
		adminURL = lp.adminURL(ns.ClientURL())
	}
	if *toolsFile != "" {
		if err := applyFile(adminURL, *toolsFile, false); err != nil {
			return err
		}
	}
	cfg := stage.Config{
		NATSURL: ns.ClientURL(), RedisURL: *redisURL, Stages: streams.Names(), HTTPAddr: *httpAddr, Log: log,
		Repair: repair, TolerantProviders: stage.SplitList(*tolerant),
	}
	if lp != nil {
		err = lp.run(ctx, adminURL, cfg)
	} else {
		err = stage.Run(ctx, cfg, nil)
	}
	ns.Shutdown()
	ns.WaitForShutdown()
	return err
}

// applyFile loads, checks and stores a tools file.
func applyFile(url, file string, prune bool) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	defs, err := tool.Load(file, data)
	if err != nil {
		return err
	}
	nc, js, err := connect(url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := timeout()
	defer cancel()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		return err
	}
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		return err
	}
	revs, err := registry.Apply(ctx, kv, file, defs, prune)
	if err != nil {
		return err
	}
	for _, d := range defs {
		fmt.Printf("tool %s applied (revision %d)\n", d.Name, revs[d.Name])
	}
	return nil
}

func logger(level string) (zerolog.Logger, error) {
	lv, err := zerolog.ParseLevel(level)
	if err != nil {
		return zerolog.Logger{}, fmt.Errorf("--log-level %q: %w", level, err)
	}
	return zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: "15:04:05.000"}).Level(lv).With().Timestamp().Logger(), nil
}
