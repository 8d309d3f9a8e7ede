package identity

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// keySet is the issuer's keys as last loaded, and when a JWKS URL was last
// fetched: a token naming a key id the set lacks refetches the URL at most
// once every RefreshEvery, so a stream of made-up kids cannot make toolgate
// hammer the issuer.
type keySet struct {
	cfg     Config
	mu      sync.Mutex
	keys    []key
	fetched time.Time // last fetch attempt, successful or not
	fetches int       // attempts so far (tests look at it)
}

func loadKeySet(ctx context.Context, cfg Config) (*keySet, error) {
	s := &keySet{cfg: cfg}
	if cfg.KeysFile != "" {
		data, err := readCapped(cfg.KeysFile)
		if err != nil {
			return nil, err
		}
		if s.keys, err = parseKeys(data); err != nil {
			return nil, fmt.Errorf("%w (file %s)", err, cfg.KeysFile)
		}
		return s, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fetchLocked(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("identity: keys file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxJWKS+1))
	if err != nil {
		return nil, fmt.Errorf("identity: keys file %s: %w", path, err)
	}
	if len(data) > MaxJWKS {
		return nil, fmt.Errorf("identity: keys file %s is over %d bytes", path, MaxJWKS)
	}
	return data, nil
}

// current returns the keys held now.
func (s *keySet) current() []key {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys
}

// refresh refetches the JWKS URL unless it was fetched less than
// RefreshEvery ago (or keys come from a file), and returns the keys held
// afterwards. A failed fetch keeps the keys held.
func (s *keySet) refresh(ctx context.Context) []key {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.JWKSURL == "" || s.cfg.Now().Sub(s.fetched) < s.cfg.RefreshEvery {
		return s.keys
	}
	_ = s.fetchLocked(ctx)
	return s.keys
}

// fetchLocked gets the JWKS URL, with a timeout and a size cap. s.mu is held.
func (s *keySet) fetchLocked(ctx context.Context) error {
	s.fetched = s.cfg.Now()
	s.fetches++
	ctx, cancel := context.WithTimeout(ctx, s.cfg.FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.JWKSURL, nil)
	if err != nil {
		return fmt.Errorf("identity: JWKS %s: %w", s.cfg.JWKSURL, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("identity: JWKS %s: %w", s.cfg.JWKSURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("identity: JWKS %s: HTTP %s", s.cfg.JWKSURL, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxJWKS+1))
	if err != nil {
		return fmt.Errorf("identity: JWKS %s: %w", s.cfg.JWKSURL, err)
	}
	if len(data) > MaxJWKS {
		return fmt.Errorf("identity: JWKS %s: over %d bytes", s.cfg.JWKSURL, MaxJWKS)
	}
	keys, err := parseKeys(data)
	if err != nil {
		return fmt.Errorf("%w (JWKS %s)", err, s.cfg.JWKSURL)
	}
	s.keys = keys
	return nil
}
