// Package httpingest is toolgate's HTTP ingest: for producers that do not
// speak NATS, it publishes a POSTed provider response or transcript with
// pkg/producer, under the same Toolgate-* headers as NATS ingest, and
// answers a long poll with the outcomes toolgate published for it. It
// keeps no state but a bounded, expiring cache of recent results, so
// replicas scale like a stage.
package httpingest

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/identity"
)

// Defaults of Config.
const (
	DefaultMaxWait       = 60 * time.Second
	DefaultKeep          = 10 * time.Minute
	DefaultMaxCacheBytes = 64 << 20
	DefaultMaxResponses  = 100_000
	DefaultMaxOutcomes   = 1024
	DefaultPublishWait   = 10 * time.Second
)

// AnyTenant in Source.Tenants serves every tenant over that connection (a
// user that may read toolgate.results.>: the admin, or a server without
// authentication).
const AnyTenant = "*"

// Source is one NATS connection and the tenants whose results its user may
// read ("" is the tenant-less producer's, AnyTenant all of them). A
// least-privilege deployment gives each tenant its own producer user
// (authz.ProducerUser), hence its own Source.
type Source struct {
	Tenants []string
	JS      jetstream.JetStream
}

// Config configures a Server.
type Config struct {
	Sources []Source
	// Credentials are the producers' bearer tokens (Authorization: Bearer);
	// a request with one acts for the tenants it allows, and reads only
	// their outcomes.
	Credentials []Credential
	// Verifier, when set, also lets a request authenticate with the
	// issuer's JWT (Toolgate-Token, or as the bearer token); the tenant is
	// then the token's. A request with neither a credential nor a valid
	// token is 401: New refuses a Config with no Credentials and no Verifier.
	Verifier *identity.Verifier
	// MaxBody is the most bytes a POST body may have (413 beyond); 0: the
	// first source's NATS max payload.
	MaxBody int64
	// MaxWait bounds ?wait= of a long poll; DefaultMaxWait if zero.
	MaxWait time.Duration
	// Keep is how long outcomes stay readable after they were published.
	Keep time.Duration
	// MaxCacheBytes and MaxResponses bound the outcome cache; the oldest
	// responses go first.
	MaxCacheBytes int
	MaxResponses  int
	// MaxOutcomes bounds the outcomes kept per response.
	MaxOutcomes int
	// PublishWait bounds one POST's publishing to JetStream.
	PublishWait time.Duration
	Log         zerolog.Logger
}

func (c *Config) setDefaults() {
	if c.MaxBody <= 0 && len(c.Sources) > 0 && c.Sources[0].JS != nil {
		c.MaxBody = c.Sources[0].JS.Conn().MaxPayload()
	}
	if c.MaxWait <= 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.Keep <= 0 {
		c.Keep = DefaultKeep
	}
	if c.MaxCacheBytes <= 0 {
		c.MaxCacheBytes = DefaultMaxCacheBytes
	}
	if c.MaxResponses <= 0 {
		c.MaxResponses = DefaultMaxResponses
	}
	if c.MaxOutcomes <= 0 {
		c.MaxOutcomes = DefaultMaxOutcomes
	}
	if c.PublishWait <= 0 {
		c.PublishWait = DefaultPublishWait
	}
}

// Validate checks that every tenant is served by one connection and that
// requests can be authenticated.
func (c Config) Validate() error {
	if len(c.Sources) == 0 {
		return errors.New("httpingest: no NATS connection (Config.Sources)")
	}
	seen := map[string]bool{}
	for _, s := range c.Sources {
		if s.JS == nil {
			return errors.New("httpingest: a source without a JetStream connection")
		}
		if len(s.Tenants) == 0 {
			return errors.New("httpingest: a source serves no tenant (use \"\" for the tenant-less producer)")
		}
		for _, t := range s.Tenants {
			if seen[t] {
				return fmt.Errorf("httpingest: tenant %q is served by two connections", t)
			}
			seen[t] = true
		}
	}
	if c.MaxBody < 0 {
		return errors.New("httpingest: MaxBody is negative")
	}
	if len(c.Credentials) == 0 && c.Verifier == nil {
		return errors.New("httpingest: no way to authenticate a request: give Credentials (bearer tokens, EnsureCredentials) or an identity Verifier")
	}
	return validateCredentials(c.Credentials)
}
