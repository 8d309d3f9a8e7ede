// Package identity verifies the token a producer sends on an ingest message
// (header Toolgate-Token: a JWT its platform's issuer signed) and maps its
// claims to a call's tenant, principal and roles.
package identity

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Defaults of Config.
const (
	DefaultRolesClaim     = "roles"
	DefaultTenantClaim    = "tenant"
	DefaultPrincipalClaim = "sub"
	DefaultLeeway         = 30 * time.Second
	DefaultMaxToken       = 8 << 10
	DefaultRefreshEvery   = 30 * time.Second
	DefaultFetchTimeout   = 5 * time.Second
	// MaxJWKS bounds the bytes read from a JWKS URL or a keys file.
	MaxJWKS = 1 << 20
)

// Config is a deployment's identity issuer. With Issuer empty identity is
// off (dev mode): ingest takes tenant, principal and roles from headers.
type Config struct {
	Issuer   string // the token's iss must equal it
	Audience string // the token's aud must hold it
	// KeysFile holds the issuer's public keys: PEM (PUBLIC KEY,
	// RSA PUBLIC KEY or CERTIFICATE blocks), or a JWK or JWKS JSON file.
	KeysFile string
	// JWKSURL is fetched at start and again, at most every RefreshEvery,
	// when a token names a key id it does not hold.
	JWKSURL        string
	RolesClaim     string // default "roles": a string (comma or space separated) or a list
	TenantClaim    string // default "tenant"
	PrincipalClaim string // default "sub"
	Leeway         time.Duration
	MaxToken       int // bytes; a longer token is refused unread
	RefreshEvery   time.Duration
	FetchTimeout   time.Duration
	HTTPClient     *http.Client
	Now            func() time.Time
}

// Enabled reports whether a deployment verifies identity.
func (c Config) Enabled() bool { return c.Issuer != "" }

func (c *Config) setDefaults() {
	if c.RolesClaim == "" {
		c.RolesClaim = DefaultRolesClaim
	}
	if c.TenantClaim == "" {
		c.TenantClaim = DefaultTenantClaim
	}
	if c.PrincipalClaim == "" {
		c.PrincipalClaim = DefaultPrincipalClaim
	}
	if c.Leeway <= 0 {
		c.Leeway = DefaultLeeway
	}
	if c.MaxToken <= 0 {
		c.MaxToken = DefaultMaxToken
	}
	if c.RefreshEvery <= 0 {
		c.RefreshEvery = DefaultRefreshEvery
	}
	if c.FetchTimeout <= 0 {
		c.FetchTimeout = DefaultFetchTimeout
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: c.FetchTimeout}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate checks an enabled configuration: an audience, and exactly one
// source of keys.
func (c Config) Validate() error {
	if !c.Enabled() {
		return nil
	}
	switch {
	case c.Audience == "":
		return errors.New("identity: an issuer needs an audience: set --identity-audience (TOOLGATE_IDENTITY_AUDIENCE) to the aud your issuer puts in toolgate's tokens")
	case c.KeysFile == "" && c.JWKSURL == "":
		return errors.New("identity: an issuer needs its public keys: set --identity-keys (a PEM or JWKS file) or --identity-jwks-url")
	case c.KeysFile != "" && c.JWKSURL != "":
		return errors.New("identity: set either --identity-keys or --identity-jwks-url, not both")
	}
	if c.JWKSURL != "" {
		u, err := url.Parse(c.JWKSURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("identity: --identity-jwks-url %q: want an https:// URL", c.JWKSURL)
		}
	}
	return nil
}
