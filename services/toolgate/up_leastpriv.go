package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/health"
	"github.com/toolgate/toolgate/internal/natsusers"
	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/streams"
)

// leastPrivilege is `toolgate up --least-privilege`: the embedded server
// gets the users of internal/authz with fresh random passwords, every stage
// connects as its own user, and an unauthenticated local connection is the
// client user (publish responses, read results, serve executors).
type leastPrivilege struct {
	passwords map[string]string
	adminFile string
}

// newLeastPrivilege adds the users to opts and writes the admin password to
// dir/nats-admin-password (mode 0600) for the operator commands.
func newLeastPrivilege(opts *server.Options, dir string) (*leastPrivilege, error) {
	lp := &leastPrivilege{passwords: map[string]string{}, adminFile: filepath.Join(dir, "nats-admin-password")}
	for _, u := range append(authz.Names(), authz.Client) {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("least privilege: password: %w", err)
		}
		lp.passwords[u] = hex.EncodeToString(b)
	}
	users, err := natsusers.Users(lp.passwords)
	if err != nil {
		return nil, err
	}
	opts.Users, opts.NoAuthUser = users, authz.Client
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("least privilege: %w", err)
	}
	if err := os.WriteFile(lp.adminFile, []byte(lp.passwords[authz.Admin]+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("least privilege: admin password: %w", err)
	}
	return lp, nil
}

// adminURL is clientURL with the admin's credentials.
func (lp *leastPrivilege) adminURL(clientURL string) string {
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
func (lp *leastPrivilege) run(ctx context.Context, adminURL string, cfg stage.Config) error {
	nc, js, err := connect(adminURL)
	if err != nil {
		return err
	}
	actx, cancel := timeout()
	err = streams.Ensure(actx, js, streams.DefaultSettings())
	cancel()
	nc.Close()
	if err != nil {
		return err
	}
	var hl net.Listener
	if cfg.HTTPAddr != "" {
		// Bound before any stage starts: a taken address stops toolgate up
		// with a clear error instead of running on without health.
		if hl, err = health.Listen(cfg.HTTPAddr); err != nil {
			return err
		}
	}
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
		if err := health.ServeListener(rctx, hl, health.Handler(check, nil)); err != nil {
			cfg.Log.Error().Err(err).Str("addr", cfg.HTTPAddr).Msg("health endpoint")
		}
	}()
	wg.Wait()
	return errors.Join(errs...)
}
