// Package console is toolgate's operator console: server-rendered pages
// (html/template, embedded assets, no build step) for the overview, calls,
// approvals, dead letters, tools and limits, with live parts over server-sent
// events. `toolgate up` mounts Handler at /console/ on its --http address;
// `toolgate console` runs it as its own process.
package console

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Prefix is where Handler is mounted.
const Prefix = "/console/"

// Config configures a console.
type Config struct {
	JS jetstream.JetStream
	NC *nats.Conn
	// Tokens maps an access token to its role; at least one is required,
	// on any address: every page needs a login.
	Tokens map[string]Role
	// Names maps a token to who holds it (the token file's name), recorded
	// with every decision; a token without one is named after its role.
	Names map[string]string
	Log   zerolog.Logger
	Now   func() time.Time
	// Metrics, when set, is the registry of the pipeline running in this
	// process (toolgate up): handle times come from its histogram. Without
	// it (toolgate console) they come from recent results' histories.
	Metrics prometheus.Gatherer
	// ReplayWait is how long a replay watches for outcomes (default 1m,
	// as `toolgate dlq replay --wait`).
	ReplayWait time.Duration
}

// Server is one console; Handler serves it.
type Server struct {
	cfg    Config
	auth   *auth
	limit  *limiter
	pages  *pages
	jobs   *jobs
	ov     *overviewCache
	ctx    context.Context
	cancel context.CancelFunc
	// streams bounds the live event streams open at once: each one reads
	// NATS every few seconds.
	streams chan struct{}
	// whatIfSem lets one what-if run at a time (whatif.go).
	whatIfSem chan struct{}
}

// maxStreams is how many event streams a console serves at once.
const maxStreams = 256

// New checks cfg and builds the console.
func New(cfg Config) (*Server, error) {
	if cfg.JS == nil {
		return nil, errors.New("console: no JetStream context")
	}
	if len(cfg.Tokens) == 0 {
		return nil, errors.New("console: no access tokens: every console needs a login (--tokens FILE, TOOLGATE_CONSOLE_TOKENS: lines `<role> <name> <token>`; toolgate up makes " + TokenFile + " in its secrets directory)")
	}
	for tok, r := range cfg.Tokens {
		if !r.valid() {
			return nil, errors.New("console: a token has unknown role " + string(r) + " (viewer, approver, operator)")
		}
		if len(tok) < minTokenLen {
			return nil, errors.New("console: a token is shorter than 16 characters")
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ReplayWait == 0 {
		cfg.ReplayWait = time.Minute
	}
	p, err := newPages()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, auth: newAuth(cfg.Tokens, cfg.Names), limit: newLimiter(), pages: p, jobs: newJobs(), ctx: ctx, cancel: cancel, streams: make(chan struct{}, maxStreams), whatIfSem: make(chan struct{}, 1)}
	s.ov = &overviewCache{s: s}
	return s, nil
}

// Close ends the live streams and running replays' watches; Handler
// answers on, without live parts.
func (s *Server) Close() { s.cancel() }

// Handler serves the console under Prefix.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+Prefix+"static/", http.StripPrefix(Prefix, staticHandler()))
	mux.HandleFunc("GET "+Prefix+"login", s.loginPage)
	mux.HandleFunc("POST "+Prefix+"login", s.login)
	mux.HandleFunc("POST "+Prefix+"logout", s.logout)
	s.route(mux, "GET "+Prefix+"{$}", Viewer, s.overviewPage)
	s.route(mux, "GET "+Prefix+"calls", Viewer, s.callsPage)
	s.route(mux, "GET "+Prefix+"calls/{id}", Viewer, s.callPage)
	s.route(mux, "GET "+Prefix+"approvals", Viewer, s.approvalsPage)
	s.route(mux, "POST "+Prefix+"approvals/{id}/{decision}", Approver, s.decide)
	s.route(mux, "GET "+Prefix+"dlq", Viewer, s.dlqPage)
	s.route(mux, "GET "+Prefix+"dlq/{seq}", Viewer, s.letterPage)
	s.route(mux, "POST "+Prefix+"dlq/replay", Operator, s.replay)
	s.route(mux, "GET "+Prefix+"dlq/replays/{job}", Viewer, s.replayPage)
	s.route(mux, "POST "+Prefix+"dlq/purge", Operator, s.purgeConfirm)
	s.route(mux, "POST "+Prefix+"dlq/purge/confirm", Operator, s.purge)
	s.route(mux, "GET "+Prefix+"tools", Viewer, s.toolsPage)
	s.route(mux, "GET "+Prefix+"tools/whatif", Viewer, s.whatIfPage)
	s.route(mux, "POST "+Prefix+"tools/whatif", Viewer, s.whatIfRun)
	s.route(mux, "GET "+Prefix+"tools/{name}", Viewer, s.toolPage)
	s.route(mux, "GET "+Prefix+"shadow", Viewer, s.shadowPage)
	s.route(mux, "GET "+Prefix+"limits", Viewer, s.limitsPage)
	s.route(mux, "GET "+Prefix+"events", Viewer, s.events)
	return secure(mux)
}
