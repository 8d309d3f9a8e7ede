package run

import (
	"context"
	"flag"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/httpingest"
	"github.com/toolgate/toolgate/internal/identity"
	"github.com/toolgate/toolgate/internal/natslog"
	"github.com/toolgate/toolgate/internal/stage"
)

// ingestHTTPFlag is up's --ingest-http: the address of the HTTP ingest it
// runs beside the stages; empty: none.
func ingestHTTPFlag(fs *flag.FlagSet, getenv func(string) string) *string {
	return fs.String("ingest-http", stage.EnvOr(getenv, "TOOLGATE_INGEST_HTTP", httpingest.DefaultAddr),
		"address of the HTTP ingest for producers that do not speak NATS: POST /v1/responses, GET /v1/responses/{id}/outcomes (TOOLGATE_INGEST_HTTP); empty: none")
}

// startIngestHTTP binds addr and serves the HTTP ingest until ctx is done.
// In least privilege it connects once per producer user (producer, and
// producer-<tenant> for each --tenants), so it reads each tenant's results
// with that tenant's own credentials; with --insecure one connection
// serves every tenant. Either way every request authenticates: each
// producer user has a bearer token, made once in the secrets directory
// (ingest-http-<user>.token) and logged by path, that acts for its tenant
// only; with an identity issuer, the issuer's JWT does too.
func startIngestHTTP(ctx context.Context, addr, clientURL string, lp *LeastPrivilege, tf trustFlags, idc identity.Config, cfg stage.Config) error {
	if addr == "" {
		return nil
	}
	tenants := *tf.tenant
	hc := httpingest.Config{Log: cfg.Log.With().Str("service", "ingest-http").Logger()}
	creds, err := httpingest.EnsureCredentials(tf.dir(), append([]string{""}, authz.ParseTenants(tenants)...))
	if err != nil {
		return fmt.Errorf("up: --ingest-http: %w", err)
	}
	hc.Credentials = creds
	var conns []*nats.Conn
	connect := func(tenants []string, opts ...nats.Option) error {
		nc, err := nats.Connect(clientURL, append(opts, nats.MaxReconnects(-1), nats.Name("toolgate ingest-http"), nats.ErrorHandler(natslog.AsyncErrors(hc.Log, natslog.Every)))...)
		if err != nil {
			return fmt.Errorf("up: --ingest-http: connect: %w", err)
		}
		conns = append(conns, nc)
		js, err := jetstream.New(nc)
		if err != nil {
			return err
		}
		hc.Sources = append(hc.Sources, httpingest.Source{Tenants: tenants, JS: js})
		return nil
	}
	closeAll := func() {
		for _, nc := range conns {
			nc.Close()
		}
	}
	if lp == nil {
		if err := connect([]string{httpingest.AnyTenant}); err != nil {
			closeAll()
			return err
		}
	} else {
		for _, t := range append([]string{""}, authz.ParseTenants(tenants)...) {
			u := authz.ProducerUser(t)
			if err := connect([]string{t}, authz.ClientOptions(u, lp.passwords[u])...); err != nil {
				closeAll()
				return err
			}
		}
	}
	if idc.Enabled() {
		v, err := identity.New(ctx, idc)
		if err != nil {
			closeAll()
			return err
		}
		hc.Verifier = v
	}
	s, err := httpingest.New(hc)
	if err != nil {
		closeAll()
		return err
	}
	l, err := httpingest.Listen(addr)
	if err != nil {
		s.Close()
		closeAll()
		return fmt.Errorf("up: --ingest-http %s is taken: %w; pick another address or --ingest-http ''", addr, err)
	}
	hc.Log.Info().Str("addr", l.Addr().String()).Msg("HTTP ingest: POST /v1/responses, GET /v1/responses/{id}/outcomes?wait=10s, each with Authorization: Bearer <a producer's token>")
	httpingest.LogCredentials(hc.Log, hc.Credentials)
	go func() {
		defer closeAll()
		defer s.Close()
		if err := s.Serve(ctx, l); err != nil {
			hc.Log.Error().Err(err).Msg("HTTP ingest stopped")
		}
	}()
	return nil
}
