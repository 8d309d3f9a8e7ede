package httpingest

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/wire"
)

// Routes of the HTTP ingest.
const (
	RouteResponses = "/v1/responses"
	RouteOutcomes  = "/v1/responses/{id}/outcomes"
)

// Server is the HTTP ingest's handler. It subscribes, per Source, to the
// results and progress of the tenants it serves from New until Close, so any replica can
// answer for a response another replica took, published while it ran.
type Server struct {
	cfg   Config
	keys  keyring
	cache *cache
	subs  []*nats.Subscription
	conns []*nats.Conn
	mux   *http.ServeMux
}

// New subscribes to the results of cfg's tenants and returns the Server.
func New(cfg Config) (*Server, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, keys: newKeyring(cfg.Credentials), cache: newCache(cfg.Keep, cfg.MaxCacheBytes, cfg.MaxResponses, cfg.MaxOutcomes)}
	for _, src := range cfg.Sources {
		nc := src.JS.Conn()
		s.conns = append(s.conns, nc)
		for _, t := range src.Tenants {
			results, progress := wire.TenantResults(t), wire.TenantProgress(t)
			if t == AnyTenant {
				results, progress = wire.ResultsPrefix+">", wire.ProgressPrefix+">"
			}
			// Progress carries the notices of calls that wait
			// (wire.Waiting), which GET outcomes lists.
			for subj, add := range map[string]func(string, []byte){results: s.cache.add, progress: s.cache.addNotice} {
				sub, err := nc.Subscribe(subj, func(m *nats.Msg) { add(m.Subject, m.Data) })
				if err != nil {
					s.Close()
					return nil, fmt.Errorf("httpingest: subscribe %s: %w", subj, err)
				}
				// Results are small and a slow reader loses them for good:
				// allow a deep queue rather than nats.go's default.
				_ = sub.SetPendingLimits(1<<16, 256<<20)
				s.subs = append(s.subs, sub)
			}
		}
		if err := nc.Flush(); err != nil {
			s.Close()
			return nil, fmt.Errorf("httpingest: %w", err)
		}
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc(RouteResponses, only(http.MethodPost, s.post))
	s.mux.HandleFunc(RouteOutcomes, only(http.MethodGet, s.outcomes))
	s.mux.HandleFunc("/healthz", only(http.MethodGet, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}))
	s.mux.HandleFunc("/readyz", only(http.MethodGet, s.ready))
	s.mux.HandleFunc("/", notFound)
	return s, nil
}

// ServeHTTP answers every route; anything else is a JSON 404 or 405.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// only answers 405 in JSON for any method but method.
func only(method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			fail(w, http.StatusMethodNotAllowed, CodeMethod, fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, method))
			return
		}
		h(w, r)
	}
}

func notFound(w http.ResponseWriter, r *http.Request) {
	fail(w, http.StatusNotFound, CodeNotFound, fmt.Sprintf("%s: no such route (POST %s, GET %s)", clip(r.URL.Path), RouteResponses, RouteOutcomes))
}

// Close unsubscribes; the connections stay the caller's.
func (s *Server) Close() error {
	var errs []error
	for _, sub := range s.subs {
		if err := sub.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			errs = append(errs, err)
		}
	}
	s.subs = nil
	return errors.Join(errs...)
}

// producerFor is the publisher of tenant's responses, and false when no
// source reads its results.
func (s *Server) producerFor(tenant string) (*producer.Producer, bool) {
	for _, want := range []string{tenant, AnyTenant} {
		for _, src := range s.cfg.Sources {
			if slices.Contains(src.Tenants, want) {
				return producer.New(src.JS).ForTenant(tenant), true
			}
		}
	}
	return nil, false
}

// tenantNotServed answers 403 for a tenant the caller may act for but no
// connection of this service reads. Which tenants it serves goes to the
// log, for the operator, not to the caller: a producer learns no other
// tenant's name.
func (s *Server) tenantNotServed(w http.ResponseWriter, tenant string) {
	var names []string
	for _, src := range s.cfg.Sources {
		for _, t := range src.Tenants {
			if t == "" {
				t = "(none)"
			}
			names = append(names, t)
		}
	}
	if tenant == "" {
		tenant = "(none)"
	}
	s.cfg.Log.Warn().Str("tenant", tenant).Strs("served", names).Msg("http ingest: a credential acts for a tenant no connection of this ingest reads; run it with a NATS user that reads that tenant's results")
	fail(w, http.StatusForbidden, CodeTenant, fmt.Sprintf("tenant %s is not served by this ingest: its operator must run it with a NATS user that reads that tenant's results", clip(tenant)))
}

func (s *Server) ready(w http.ResponseWriter, _ *http.Request) {
	for _, nc := range s.conns {
		if !nc.IsConnected() {
			fail(w, http.StatusServiceUnavailable, CodeUnavailable, "not connected to NATS")
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// clip bounds a value quoted back in an error.
func clip(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q…", s[:80])
	}
	return fmt.Sprintf("%q", s)
}
