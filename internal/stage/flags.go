package stage

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/streams"
)

// Defaults are the flag defaults that differ between a stage service and
// `toolgate up`.
type Defaults struct {
	// NATSURL is the --nats default; empty: no --nats flag (toolgate up
	// connects the stages to its embedded server).
	NATSURL  string
	HTTPAddr string // the --http default
	// IdemStore is the --idem-store default (idemstore.go); the zero value,
	// IdemAuto, is toolgate up's: Redis when given, else the embedded bucket.
	IdemStore string
}

// ServiceDefaults are the defaults of services/<stage>: health and metrics
// on loopback only, and an execute stage that needs Redis.
func ServiceDefaults() Defaults {
	return Defaults{NATSURL: "nats://127.0.0.1:4222", HTTPAddr: "127.0.0.1:8080", IdemStore: IdemRedis}
}

// Flagged is what the stage flags configure: a Config without Stages and
// Log, and the log level as given.
type Flagged struct {
	Config
	LogLevel string
}

// EnvOr is getenv(k), or def when it is empty.
func EnvOr(getenv func(string) string, k, def string) string {
	if v := getenv(k); v != "" {
		return v
	}
	return def
}

// Flags declares every stage flag on fs, each defaulting to its TOOLGATE_*
// variable read through getenv, and returns the function that builds the
// configuration once fs is parsed. services/<stage> (Main) and `toolgate
// up` both declare their stage flags here, so they have the same ones.
func Flags(fs *flag.FlagSet, getenv func(string) string, d Defaults) func() (Flagged, error) {
	def := func(k, v string) string { return EnvOr(getenv, k, v) }
	var natsURL *string
	if d.NATSURL != "" {
		natsURL = fs.String("nats", def("TOOLGATE_NATS_URL", d.NATSURL), "NATS server URL (TOOLGATE_NATS_URL)")
	}
	redisURL := fs.String("redis", def("TOOLGATE_REDIS_URL", ""), "Redis URL for idempotency keys: redis://127.0.0.1:6379/0, redis-sentinel://h1:26379,h2:26379/mymaster, or redis-cluster://h1:7000,h2:7001; ?wait_replicas=auto|N&wait_timeout=1s (TOOLGATE_REDIS_URL; execute only)")
	idemStore := fs.String("idem-store", def("TOOLGATE_IDEM_STORE", d.IdemStore), "execute only: where idempotency keys live: "+IdemRedis+" (Redis at --redis, required) or "+IdemEmbedded+" (the JetStream key-value bucket); unset: Redis when --redis is given, else the bucket (TOOLGATE_IDEM_STORE)")
	httpAddr := fs.String("http", def("TOOLGATE_HTTP_ADDR", d.HTTPAddr), "/healthz, /readyz and /metrics address (TOOLGATE_HTTP_ADDR); empty: none")
	level := fs.String("log-level", def("TOOLGATE_LOG_LEVEL", "info"), "debug, info, warn, error (TOOLGATE_LOG_LEVEL)")
	ensure := fs.Bool("ensure", def("TOOLGATE_ENSURE", "true") == "true", "create or update streams, buckets and consumers at start (TOOLGATE_ENSURE); false when an admin applies them and this stage runs as a least-privilege NATS user")
	user := fs.String("nats-user", def("TOOLGATE_NATS_USER", ""), "NATS user, normally the stage name (TOOLGATE_NATS_USER); the password is read from TOOLGATE_NATS_PASSWORD")
	defReplicas, replicasErr := strconv.Atoi(def("TOOLGATE_STREAM_REPLICAS", "1"))
	if replicasErr != nil {
		defReplicas = 1
	}
	replicas := fs.Int("stream-replicas", defReplicas, "replicas of the streams and buckets this stage creates (TOOLGATE_STREAM_REPLICAS)")
	idle := fs.Duration("stream-idle-timeout", 0, "a streamed response with no event for this long ends transport_incomplete; default 60s (TOOLGATE_STREAM_IDLE_TIMEOUT)")
	maxEvents := fs.Int("stream-max-events", 0, "the most events, and the highest Toolgate-Seq, one streamed response may have; an event past it is refused and dead-lettered; default 10000 (TOOLGATE_STREAM_MAX_EVENTS)")
	ackWait := fs.Duration("ack-wait", 0, "how long a delivery may stay unacked before it is redelivered, and the grace added to a tool's timeout in an execute claim's lease; default 30s (TOOLGATE_ACK_WAIT; every stage of one deployment must agree)")
	approvalTTL := fs.String("approval-ttl", def("TOOLGATE_APPROVAL_TTL", "15m"), "how long a call waits for a human decision (toolgate approve/deny) before it ends as approval_expired (TOOLGATE_APPROVAL_TTL; the policy stage)")
	hops := fs.String("hop-encoding", def("TOOLGATE_HOP_ENCODING", "binary"), "how envelopes travel between gates: binary (the protobuf wire format, about 5x cheaper to write and 3x to read than JSON) or json, for a rollout while stages of a version that reads only JSON still run; every stage reads both (TOOLGATE_HOP_ENCODING)")
	auditStream := fs.String("audit-stream", def("TOOLGATE_AUDIT_STREAM", "false"), "also publish each terminal call's audit event on toolgate.audit.<status> (the TOOLGATE_AUDIT stream), for a SIEM that subscribes there; default false: the audit event rides in the call's result only (its \"audit\" field), one stored message and two NATS messages fewer per call (TOOLGATE_AUDIT_STREAM)")
	tolerant := fs.String("tolerant-providers", def("TOOLGATE_TOLERANT_PROVIDERS", ""), "providers whose responses always get recovery of calls written as text, comma separated, e.g. ollama (TOOLGATE_TOLERANT_PROVIDERS)")
	repairConfig := RepairFlags(fs, getenv)
	execConfig := ExecFlags(fs, getenv) // flags_exec.go
	sealConfig := SealFlags(fs, getenv)
	identityConfig := IdentityFlags(fs, getenv) // flags_identity.go
	fairConfig := FairFlags(fs, getenv)         // flags_fair.go
	return func() (Flagged, error) {
		if replicasErr != nil {
			return Flagged{}, fmt.Errorf("TOOLGATE_STREAM_REPLICAS: want a number of replicas (1 or 3): %v", replicasErr)
		}
		var err error
		if *idle == 0 && getenv("TOOLGATE_STREAM_IDLE_TIMEOUT") != "" {
			if *idle, err = time.ParseDuration(getenv("TOOLGATE_STREAM_IDLE_TIMEOUT")); err != nil {
				return Flagged{}, fmt.Errorf("TOOLGATE_STREAM_IDLE_TIMEOUT: %v", err)
			}
		}
		if *maxEvents == 0 && getenv("TOOLGATE_STREAM_MAX_EVENTS") != "" {
			if *maxEvents, err = strconv.Atoi(getenv("TOOLGATE_STREAM_MAX_EVENTS")); err != nil || *maxEvents < 1 {
				return Flagged{}, fmt.Errorf("TOOLGATE_STREAM_MAX_EVENTS: want a positive number of events such as 10000")
			}
		}
		if *maxEvents < 0 {
			return Flagged{}, fmt.Errorf("--stream-max-events: want a positive number of events such as 10000")
		}
		if *ackWait == 0 && getenv("TOOLGATE_ACK_WAIT") != "" {
			if *ackWait, err = time.ParseDuration(getenv("TOOLGATE_ACK_WAIT")); err != nil {
				return Flagged{}, fmt.Errorf("TOOLGATE_ACK_WAIT: want a duration such as 30s: %v", err)
			}
		}
		jsonHops, err := JSONHops(*hops)
		if err != nil {
			return Flagged{}, err
		}
		withAudit, err := strconv.ParseBool(*auditStream)
		if err != nil {
			return Flagged{}, fmt.Errorf("--audit-stream %q: want true or false", *auditStream)
		}
		ttl, err := time.ParseDuration(*approvalTTL)
		if err != nil || ttl <= 0 {
			return Flagged{}, fmt.Errorf("--approval-ttl %q: want a positive duration such as 15m or 2h", *approvalTTL)
		}
		repair, err := repairConfig()
		if err != nil {
			return Flagged{}, err
		}
		execCfg, err := execConfig()
		if err != nil {
			return Flagged{}, err
		}
		settings := streams.DefaultSettings()
		settings.Replicas = *replicas
		if settings.Fair, err = fairConfig(); err != nil {
			return Flagged{}, err
		}
		if *ackWait > 0 {
			settings.AckWait = *ackWait
		}
		var natsOpts []nats.Option
		if *user != "" {
			natsOpts = authz.ClientOptions(*user, getenv("TOOLGATE_NATS_PASSWORD"))
		}
		cfg := Config{
			NATSOpts: natsOpts, RedisURL: *redisURL, IdemStore: *idemStore, HTTPAddr: *httpAddr, Settings: settings, SkipEnsure: !*ensure,
			Repair: repair, StreamIdle: *idle, StreamMaxEvents: *maxEvents, TolerantProviders: SplitList(*tolerant),
		}
		cfg.Exec = execCfg
		cfg.ApprovalTTL = ttl
		cfg.JSONHops = jsonHops
		cfg.AuditStream = withAudit
		if natsURL != nil {
			cfg.NATSURL = *natsURL
		}
		sealConfig(&cfg)
		if err := identityConfig(&cfg); err != nil {
			return Flagged{}, err
		}
		return Flagged{Config: cfg, LogLevel: *level}, nil
	}
}

// JSONHops reads a --hop-encoding value: binary (false) or json (true).
func JSONHops(encoding string) (bool, error) {
	switch encoding {
	case "binary":
		return false, nil
	case "json":
		return true, nil
	}
	return false, fmt.Errorf("--hop-encoding %q: want binary or json", encoding)
}
