package httpingest

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/secrets"
)

// MinTokenBytes is the shortest bearer token a Credential may have.
const MinTokenBytes = 16

// Credential is one producer's bearer token for the HTTP ingest
// (Authorization: Bearer <Token>) and the identity it stands for: the
// tenants its requests may name in Toolgate-Tenant ("" is the tenant-less
// producer's) and, when set, the principal every request of it carries. A
// caller with it reads the outcomes of those tenants only, as the NATS
// producer user of a tenant reads only that tenant's results.
type Credential struct {
	Name      string // who it is, for logs: the producer user it mirrors; never the token
	Token     string
	Tenants   []string
	Principal string // "": the request's Toolgate-Principal, as a NATS producer sends it
	File      string // where the token is kept, for logs; "" if not in a file
}

// TokenFile is the file of user's bearer token in the secrets directory:
// ingest-http-<producer user>.token.
func TokenFile(user string) string { return "ingest-http-" + user + ".token" }

// EnsureCredentials returns one Credential per tenant ("" the tenant-less
// producer), named after that tenant's producer user, its token read from
// dir/TokenFile(user) or generated there once (mode 0600) and kept, so
// clients configured before a restart still authenticate after it.
func EnsureCredentials(dir string, tenants []string) ([]Credential, error) {
	var out []Credential
	for _, t := range tenants {
		u := authz.ProducerUser(t)
		b, err := secrets.Ensure(dir, TokenFile(u), secrets.Random(32))
		if err != nil {
			return nil, fmt.Errorf("httpingest: %w", err)
		}
		out = append(out, Credential{Name: u, Token: strings.TrimSpace(string(b)), Tenants: []string{t}, File: filepath.Join(dir, TokenFile(u))})
	}
	return out, nil
}

// LogCredentials says, once per credential, which file holds its token and
// which tenants it acts for: the path, never the token.
func LogCredentials(log zerolog.Logger, cs []Credential) {
	for _, c := range cs {
		if c.File == "" {
			continue
		}
		log.Info().Str("credential", c.Name).Strs("tenants", c.Tenants).Str("token_file", c.File).
			Msg("HTTP ingest bearer token: send Authorization: Bearer $(cat token_file)")
	}
}

// validateCredentials checks every credential has a long enough token of its own and
// at least one tenant.
func validateCredentials(cs []Credential) error {
	seen := map[[32]byte]bool{}
	for _, c := range cs {
		if len(c.Token) < MinTokenBytes {
			return fmt.Errorf("httpingest: credential %q: a token of %d bytes; want %d or more", c.Name, len(c.Token), MinTokenBytes)
		}
		if len(c.Tenants) == 0 {
			return fmt.Errorf("httpingest: credential %q allows no tenant (use \"\" for the tenant-less producer)", c.Name)
		}
		h := sha256.Sum256([]byte(c.Token))
		if seen[h] {
			return errors.New("httpingest: two credentials share one token")
		}
		seen[h] = true
	}
	return nil
}

// keyring finds a credential by its token in constant time: the tokens'
// digests are compared with subtle.ConstantTimeCompare, every one of them
// whatever matched, so the time taken tells nothing of how much matched.
type keyring struct {
	digests [][32]byte
	creds   []Credential
}

func newKeyring(cs []Credential) keyring {
	k := keyring{creds: cs}
	for _, c := range cs {
		k.digests = append(k.digests, sha256.Sum256([]byte(c.Token)))
	}
	return k
}

// find returns the credential whose token is tok.
func (k keyring) find(tok string) (Credential, bool) {
	d := sha256.Sum256([]byte(tok))
	hit := -1
	for i := range k.digests {
		if subtle.ConstantTimeCompare(d[:], k.digests[i][:]) == 1 {
			hit = i
		}
	}
	if hit < 0 {
		return Credential{}, false
	}
	return k.creds[hit], true
}

// allows reports whether c may act for tenant.
func (c Credential) allows(tenant string) bool { return slices.Contains(c.Tenants, tenant) }
