package stage

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// ExecConfig configures the execute stage's requests to executors.
type ExecConfig struct {
	// Signer signs every executor request (--exec-signing-key). nil: Run
	// generates a key in memory and logs its public key; executors that
	// verify (pkg/toolserver's default) refuse every call until they are
	// given that key, so a real deployment sets one. `toolgate up` keeps
	// the pair in its secrets directory (EnsureKey).
	Signer *execute.Signer
	// KeyFile is where Signer came from, for the start log.
	KeyFile string
	// Allow lists the HTTP executor destinations (--exec-allow); nil or
	// empty: every HTTP executor is refused.
	Allow *execute.Destinations
	// MaxResult is the most bytes of an executor's answer kept whole
	// (--exec-max-result); 0: execute.DefaultMaxResult.
	MaxResult int
	// MCPCommands are the stdio MCP server commands execute may start
	// (--exec-mcp-commands); empty: none.
	MCPCommands []string
	// SignatureTTL is how long a signed executor request stays good
	// (--exec-signature-ttl); 0: wire.DefaultExecLifetime. Executors
	// refuse one signed to live longer than they accept (60 s by default).
	SignatureTTL time.Duration
	// SignatureV1 also signs a v1 (no expiry) beside the v2
	// (--exec-signature-v1=true), for executors that read only v1. Off by
	// default: such a v1 never expires, and it doubles the signing work.
	SignatureV1 bool
}

// ExecFlags declares the execute stage's executor flags on fs.
func ExecFlags(fs *flag.FlagSet, getenv func(string) string) func() (ExecConfig, error) {
	def := func(k, v string) string { return EnvOr(getenv, k, v) }
	key := fs.String("exec-signing-key", def("TOOLGATE_EXEC_SIGNING_KEY", ""), "execute only: the ed25519 key that signs every executor request, a PEM PRIVATE KEY (PKCS#8) file as `openssl genpkey -algorithm ed25519` writes it; executors verify with its public key (TOOLGATE_EXEC_SIGNING_KEY; toolgate up: exec-signing.key in its secrets directory)")
	allow := fs.String("exec-allow", def("TOOLGATE_EXEC_ALLOW", ""), "execute only: where HTTP executors may connect, a comma list of hostnames, host:port, IPs and CIDRs, * for any public address; loopback, private, link-local and metadata addresses need an IP or CIDR entry (TOOLGATE_EXEC_ALLOW); empty: no HTTP executor")
	mcpCommands := fs.String("exec-mcp-commands", def("TOOLGATE_EXEC_MCP_COMMANDS", ""), "execute only: the stdio MCP server commands executors of type mcp may start, a comma list of exact command paths as tool definitions name them (TOOLGATE_EXEC_MCP_COMMANDS); empty: none — whoever may apply tools names the command")
	maxResult := fs.String("exec-max-result", def("TOOLGATE_EXEC_MAX_RESULT", ""), "execute only: the most bytes of an executor's answer kept whole in the results, beyond which it is kept cut to its size, sha256 and an excerpt; default "+strconv.Itoa(execute.DefaultMaxResult)+" (TOOLGATE_EXEC_MAX_RESULT)")
	ttl := fs.String("exec-signature-ttl", def("TOOLGATE_EXEC_SIGNATURE_TTL", ""), "execute only: how long a signed executor request stays good, after which executors refuse it; at most what they accept (pkg/toolserver's Lifetime); default "+wire.DefaultExecLifetime.String()+" (TOOLGATE_EXEC_SIGNATURE_TTL)")
	v1 := fs.String("exec-signature-v1", def("TOOLGATE_EXEC_SIGNATURE_V1", "false"), "execute only: also sign every executor request with a v1 (no expiry) beside the v2, for executors that predate the expiry and read only v1; a captured request signed so never expires for them, and signing costs two ed25519 signatures a request instead of one; default false: the v2 alone, which pkg/toolserver verifies (TOOLGATE_EXEC_SIGNATURE_V1)")
	return func() (ExecConfig, error) {
		var c ExecConfig
		var err error
		withV1, err := strconv.ParseBool(*v1)
		if err != nil {
			return ExecConfig{}, fmt.Errorf("--exec-signature-v1 %q: want true or false", *v1)
		}
		c.SignatureV1 = withV1
		if *ttl != "" {
			if c.SignatureTTL, err = time.ParseDuration(*ttl); err != nil || c.SignatureTTL < time.Second {
				return ExecConfig{}, fmt.Errorf("--exec-signature-ttl %q: want a duration of at least 1s such as %v", *ttl, wire.DefaultExecLifetime)
			}
		}
		if *key != "" {
			if c.Signer, err = execute.LoadSigner(*key); err != nil {
				return ExecConfig{}, err
			}
			c.KeyFile = *key
		}
		if c.Allow, err = execute.ParseDestinations(*allow); err != nil {
			return ExecConfig{}, err
		}
		c.MCPCommands = SplitList(*mcpCommands)
		if *maxResult != "" {
			if c.MaxResult, err = strconv.Atoi(*maxResult); err != nil || c.MaxResult < 1 {
				return ExecConfig{}, fmt.Errorf("--exec-max-result %q: want a positive number of bytes such as %d", *maxResult, execute.DefaultMaxResult)
			}
		}
		return c, nil
	}
}

// EnsureKey gives c the signing pair of the secrets directory dir, making
// it there the first time (execute.EnsureSigner), unless a key is
// configured: what `toolgate up` does, so its executors find
// dir/exec-signing.pub.
func (c *ExecConfig) EnsureKey(dir string) error {
	if c.Signer != nil {
		return nil
	}
	s, err := execute.EnsureSigner(dir)
	if err != nil {
		return err
	}
	c.Signer, c.KeyFile = s, filepath.Join(dir, execute.SigningKeyFile)
	return nil
}

// resolve fills in an ephemeral signer for a process that runs execute
// without one, and logs what executors must be given.
func (c ExecConfig) resolve(stages []string, log zerolog.Logger) (ExecConfig, error) {
	runs := false
	for _, s := range stages {
		runs = runs || s == streams.Execute
	}
	if !runs {
		return c, nil
	}
	if c.Signer == nil {
		s, err := execute.GenerateSigner()
		if err != nil {
			return c, err
		}
		c.Signer = s
		log.Warn().Str("public_key", strings.TrimSpace(s.PublicText())).Msg("no --exec-signing-key: executor requests are signed with a key made for this process only; executors that verify refuse them until given this public key (set TOOLGATE_EXEC_SIGNING_KEY)")
	} else {
		log.Info().Str("key", c.KeyFile).Str("public_key", strings.TrimSpace(c.Signer.PublicText())).Msg("executor requests are signed")
	}
	c.Signer = c.Signer.WithLifetime(c.SignatureTTL)
	if c.SignatureV1 {
		c.Signer = c.Signer.WithV1()
		log.Warn().Msg("--exec-signature-v1=true: executor requests carry a v1 signature beside the v2, for executors that read only v1; a captured request never expires for them (upgrade them to verify v2, then drop the flag)")
	}
	if c.Allow.Empty() {
		log.Info().Msg("no --exec-allow: HTTP executors are refused (TOOLGATE_EXEC_ALLOW lists where they may connect)")
	} else {
		log.Info().Str("allow", c.Allow.String()).Msg("HTTP executor destinations")
	}
	return c, nil
}

// selector is the execute gate's choice of executor under c.
func (c ExecConfig) selector(nc *nats.Conn) execute.Selector {
	return execute.Selector{NC: nc, Signer: c.Signer, Allow: c.Allow, MaxResult: c.MaxResult, MCP: &execute.MCPPool{}, Commands: c.MCPCommands}
}
