// Package keygen makes every secret a toolgate deployment needs in one
// directory, the layout of `toolgate up`'s secrets directory
// (internal/secrets): a NATS password per user (nats-<user>.password), a
// seal key per sealing stage (seal-<stage>.key), the executor signing key
// pair (exec-signing.key, exec-signing.pub). Files that exist are kept, so
// running it again adds only what is missing and rotates nothing. Beside
// them it writes what deploy/ and docker-compose.yml read: nats-users.env
// (TOOLGATE_NATS_PASSWORD_<USER>=..., kustomize's secretGenerator) and
// compose.env (the same, plus where the files are and whose they are, for
// `docker compose --env-file`). `toolgate secrets init DIR` runs it.
package keygen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/internal/secrets"
	"github.com/toolgate/toolgate/streams"
)

// The files Init writes from the others, rewritten on every run.
const (
	UsersEnv   = "nats-users.env"
	ComposeEnv = "compose.env"
	// ComposeDirVar names the directory in compose.env: docker-compose.yml
	// mounts the key files from there.
	ComposeDirVar = "TOOLGATE_COMPOSE_SECRETS"
)

// Init makes the secrets of c's users and every stage in dir.
func Init(dir string, c authz.Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	var env strings.Builder
	for _, u := range c.Names() {
		b, err := secrets.Ensure(dir, authz.PasswordFile(u), secrets.Random(16))
		if err != nil {
			return fmt.Errorf("keygen: %w", err)
		}
		fmt.Fprintf(&env, "%s=%s\n", authz.PasswordVar(u), strings.TrimSpace(string(b)))
	}
	if _, err := seal.Ensure(dir, streams.Names()); err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	if _, err := execute.EnsureSigner(dir); err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	compose := env.String() + fmt.Sprintf("%s=%s\nTOOLGATE_UID=%d\nTOOLGATE_GID=%d\n", ComposeDirVar, abs, os.Getuid(), os.Getgid())
	for name, content := range map[string]string{UsersEnv: env.String(), ComposeEnv: compose} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return fmt.Errorf("keygen: %w", err)
		}
	}
	return nil
}

// Files lists the files Init makes for c, sorted as it makes them.
func Files(c authz.Config) []string {
	var out []string
	for _, u := range c.Names() {
		out = append(out, authz.PasswordFile(u))
	}
	for _, st := range seal.Needed(streams.Names()) {
		out = append(out, seal.FileName(st))
	}
	return append(out, execute.SigningKeyFile, execute.PublicKeyFile, UsersEnv, ComposeEnv)
}
