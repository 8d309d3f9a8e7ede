package identity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Identity is who a verified token says sent a message.
type Identity struct {
	Tenant    string
	Principal string
	Roles     []string
}

// Verifier checks tokens against one issuer's keys. It is safe for
// concurrent use.
type Verifier struct {
	cfg  Config
	keys *keySet
	seen tokenCache
}

// New loads the issuer's keys (the file, or a first fetch of the JWKS URL)
// and returns a Verifier; cfg must be Enabled.
func New(ctx context.Context, cfg Config) (*Verifier, error) {
	if !cfg.Enabled() {
		return nil, errors.New("identity: no issuer configured")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	ks, err := loadKeySet(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Verifier{cfg: cfg, keys: ks}, nil
}

// Bounds of the claims a token maps to a call.
const (
	maxClaim = 256 // bytes of tenant, principal and each role
	maxRoles = 64
)

// allAlgs are the only algorithms a token may name; each key narrows them
// to its own type's (keys.go).
func allAlgs() []string {
	return []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
}

// Verify checks token (signature, alg fitting the key, iss, aud, exp
// required, nbf and iat with Leeway) and maps its claims. Every error says
// why the token was refused; none panics on any input.
func (v *Verifier) Verify(ctx context.Context, token string) (Identity, error) {
	return v.VerifyAt(ctx, token, v.cfg.Now())
}

// VerifyAt is Verify with the time checks made at at: ingest checks a stored
// stream event at the time it was stored, so every replica that reads it
// back decides alike.
func (v *Verifier) VerifyAt(ctx context.Context, token string, at time.Time) (Identity, error) {
	switch {
	case token == "":
		return Identity{}, errors.New("identity: no token: send the issuer's JWT in header Toolgate-Token")
	case len(token) > v.cfg.MaxToken:
		return Identity{}, fmt.Errorf("identity: token is %d bytes, over the %d-byte limit", len(token), v.cfg.MaxToken)
	}
	p := jwt.NewParser(
		jwt.WithValidMethods(allAlgs()),
		jwt.WithIssuer(v.cfg.Issuer),
		jwt.WithAudience(v.cfg.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(v.cfg.Leeway),
		jwt.WithTimeFunc(func() time.Time { return at }),
	)
	if id, ok := v.seen.get(token, at, v.cfg.Leeway); ok {
		return id, nil
	}
	claims := jwt.MapClaims{}
	if _, err := p.ParseWithClaims(token, claims, v.keyfunc(ctx)); err != nil {
		return Identity{}, fmt.Errorf("identity: token refused: %w", err)
	}
	id, err := v.identity(claims)
	if err == nil {
		v.seen.put(token, id, claims)
	}
	return id, err
}

// keyfunc picks the keys a token may be verified with: those of its kid
// (and those without a kid), fitting its alg; an unknown kid refreshes the
// JWKS, rate-limited.
func (v *Verifier) keyfunc(ctx context.Context) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		alg, _ := t.Header["alg"].(string)
		kid, _ := t.Header["kid"].(string)
		fit := matching(v.keys.current(), kid, alg)
		if len(fit) == 0 && kid != "" {
			fit = matching(v.keys.refresh(ctx), kid, alg)
		}
		if len(fit) == 0 {
			return nil, fmt.Errorf("no key of the issuer has kid %q and fits alg %q", kid, alg)
		}
		return jwt.VerificationKeySet{Keys: fit}, nil
	}
}

func matching(keys []key, kid, alg string) []jwt.VerificationKey {
	var out []jwt.VerificationKey
	for _, k := range keys {
		if (kid == "" || k.kid == "" || k.kid == kid) && slices.Contains(k.algs, alg) {
			out = append(out, k.pub)
		}
	}
	return out
}

// identity maps verified claims: principal (sub by default) required,
// tenant optional, roles a string or a list of strings.
func (v *Verifier) identity(c jwt.MapClaims) (Identity, error) {
	var id Identity
	var err error
	if id.Principal, err = stringClaim(c, v.cfg.PrincipalClaim); err != nil {
		return Identity{}, err
	}
	if id.Principal == "" {
		return Identity{}, fmt.Errorf("identity: token has no %q claim: it names no principal", v.cfg.PrincipalClaim)
	}
	if id.Tenant, err = stringClaim(c, v.cfg.TenantClaim); err != nil {
		return Identity{}, err
	}
	if id.Roles, err = rolesClaim(c, v.cfg.RolesClaim); err != nil {
		return Identity{}, err
	}
	return id, nil
}

func stringClaim(c jwt.MapClaims, name string) (string, error) {
	raw, ok := c[name]
	if !ok || raw == nil {
		return "", nil
	}
	s, ok := raw.(string)
	if !ok {
		return "", fmt.Errorf("identity: token claim %q is not a string", name)
	}
	if len(s) > maxClaim {
		return "", fmt.Errorf("identity: token claim %q is %d bytes, over %d", name, len(s), maxClaim)
	}
	return s, nil
}

func rolesClaim(c jwt.MapClaims, name string) ([]string, error) {
	var raw []string
	switch r := c[name].(type) {
	case nil:
	case string:
		raw = strings.FieldsFunc(r, func(c rune) bool { return c == ',' || c == ' ' })
	case []any:
		for _, e := range r {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("identity: token claim %q holds a non-string", name)
			}
			raw = append(raw, s)
		}
	default:
		return nil, fmt.Errorf("identity: token claim %q is neither a string nor a list", name)
	}
	var roles []string
	for _, s := range raw {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if len(s) > maxClaim || len(roles) == maxRoles {
			return nil, fmt.Errorf("identity: token claim %q holds more than %d roles or one over %d bytes", name, maxRoles, maxClaim)
		}
		roles = append(roles, s)
	}
	return roles, nil
}
