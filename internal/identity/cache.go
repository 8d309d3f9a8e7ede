package identity

import (
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// tokenCache remembers tokens that verified, with their time claims, so the
// events of one stream, which all carry the same token, cost one signature
// check: a hit still checks exp, nbf and iat at the time asked. Bounded:
// when full it is emptied.
type tokenCache struct {
	mu sync.Mutex
	m  map[string]seenToken
}

type seenToken struct {
	id            Identity
	exp, nbf, iat time.Time
}

const tokenCacheCap = 4096

func (c *tokenCache) get(token string, at time.Time, leeway time.Duration) (Identity, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.m[token]
	if !ok || !at.Before(s.exp.Add(leeway)) || at.Add(leeway).Before(s.nbf) || at.Add(leeway).Before(s.iat) {
		return Identity{}, false
	}
	return s.id, true
}

func (c *tokenCache) put(token string, id Identity, claims jwt.MapClaims) {
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return
	}
	s := seenToken{id: id, exp: exp.Time}
	if nbf, err := claims.GetNotBefore(); err == nil && nbf != nil {
		s.nbf = nbf.Time
	}
	if iat, err := claims.GetIssuedAt(); err == nil && iat != nil {
		s.iat = iat.Time
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= tokenCacheCap {
		c.m = map[string]seenToken{}
	}
	c.m[token] = s
}
