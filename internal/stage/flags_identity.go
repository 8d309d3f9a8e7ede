package stage

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/identity"
	"github.com/toolgate/toolgate/streams"
)

// IdentityFlags declares the identity issuer's flags, --identity-assert-users
// and --response-id-ttl, each defaulting to its TOOLGATE_* variable, and
// returns the function that sets the parsed values on a Config and checks
// them. Without --identity-issuer identity is off (dev mode): tenant and
// principal are taken from the ingest headers, roles are granted none
// (except to the users --identity-assert-users lists, on their own
// subject), and every call says identity unverified.
func IdentityFlags(fs *flag.FlagSet, getenv func(string) string) func(*Config) error {
	def := func(k string) string { return EnvOr(getenv, k, "") }
	issuer := fs.String("identity-issuer", def("TOOLGATE_IDENTITY_ISSUER"), "the identity issuer whose JWT (header Toolgate-Token) every ingest message must carry; tenant, principal and roles then come only from it (TOOLGATE_IDENTITY_ISSUER); empty: dev mode, identity headers taken on trust")
	audience := fs.String("identity-audience", def("TOOLGATE_IDENTITY_AUDIENCE"), "the aud the issuer puts in toolgate's tokens (TOOLGATE_IDENTITY_AUDIENCE)")
	keys := fs.String("identity-keys", def("TOOLGATE_IDENTITY_KEYS"), "file of the issuer's public keys: PEM, JWK or JWKS (TOOLGATE_IDENTITY_KEYS)")
	jwks := fs.String("identity-jwks-url", def("TOOLGATE_IDENTITY_JWKS_URL"), "the issuer's JWKS URL, fetched at start and on an unknown kid at most every 30s (TOOLGATE_IDENTITY_JWKS_URL)")
	roles := fs.String("identity-roles-claim", EnvOr(getenv, "TOOLGATE_IDENTITY_ROLES_CLAIM", identity.DefaultRolesClaim), "the token claim holding roles, a string or a list (TOOLGATE_IDENTITY_ROLES_CLAIM)")
	tenant := fs.String("identity-tenant-claim", EnvOr(getenv, "TOOLGATE_IDENTITY_TENANT_CLAIM", identity.DefaultTenantClaim), "the token claim holding the tenant (TOOLGATE_IDENTITY_TENANT_CLAIM); the principal is sub")
	assert := fs.String("identity-assert-users", def("TOOLGATE_IDENTITY_ASSERT_USERS"), "without an issuer: the NATS users (comma separated, e.g. a producer user of a gateway that authenticates its own callers) whose Toolgate-Tenant, -Principal and -Roles count when they publish on their own subject toolgate.in.as.<user>.response; from anyone else roles are not granted (TOOLGATE_IDENTITY_ASSERT_USERS)")
	ttl := fs.Duration("response-id-ttl", 0, "how long a response id stays used, so other content under it is refused (response_id_conflict): longer than approvals wait and dead letters are replayed; default 168h (TOOLGATE_RESPONSE_ID_TTL; the bucket's TTL is set by whoever applies the topology)")
	return func(c *Config) error {
		c.Identity = identity.Config{Issuer: *issuer, Audience: *audience, KeysFile: *keys, JWKSURL: *jwks, RolesClaim: *roles, TenantClaim: *tenant}
		c.AssertUsers = nil
		for _, u := range strings.Split(*assert, ",") {
			if u = strings.TrimSpace(u); u != "" {
				if strings.ContainsAny(u, ".*> \t") {
					return fmt.Errorf("--identity-assert-users: %q is not a NATS user name that can stand in a subject", u)
				}
				c.AssertUsers = append(c.AssertUsers, u)
			}
		}
		if *ttl == 0 && getenv("TOOLGATE_RESPONSE_ID_TTL") != "" {
			d, err := time.ParseDuration(getenv("TOOLGATE_RESPONSE_ID_TTL"))
			if err != nil || d <= 0 {
				return fmt.Errorf("TOOLGATE_RESPONSE_ID_TTL: want a duration such as 168h")
			}
			*ttl = d
		}
		if *ttl > 0 {
			c.Settings.ResponseIDTTL = *ttl
		}
		return c.Identity.Validate()
	}
}

// identityVerifier is the verifier of cfg.Identity for a process that runs
// accumulate, nil in dev mode or without accumulate; it logs which mode
// ingest runs in.
func identityVerifier(ctx context.Context, cfg Config, log zerolog.Logger) (*identity.Verifier, error) {
	if !slices.Contains(cfg.Stages, streams.Accumulate) {
		return nil, nil
	}
	if !cfg.Identity.Enabled() {
		log.Warn().Str("identity", "unverified").Strs("assert_users", cfg.AssertUsers).Msg("no identity issuer (--identity-issuer): tenant and principal are taken from the ingest headers on trust and roles are granted none (but to --identity-assert-users on their own subject); every call is recorded identity unverified")
		return nil, nil
	}
	v, err := identity.New(ctx, cfg.Identity)
	if err != nil {
		return nil, err
	}
	log.Info().Str("identity", "verified").Str("issuer", cfg.Identity.Issuer).Msg("ingest verifies the producer's token (Toolgate-Token); identity headers are ignored")
	return v, nil
}
