// Package secrets keeps the credentials and keys toolgate generates for
// itself: NATS passwords, gate seal keys, the executor signing key. They
// live in one directory (mode 0700), a file each (mode 0600), made once and
// read back on every start, so envelopes sealed and clients configured
// before a restart stay valid after it.
package secrets

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultDir is where `toolgate up` keeps them unless told otherwise, and
// where the CLI, `make run`, the example executor and the producer client
// look for them (TOOLGATE_SECRETS).
const DefaultDir = ".toolgate/secrets"

// Dir is the secrets directory: getenv("TOOLGATE_SECRETS"), else DefaultDir.
func Dir(getenv func(string) string) string {
	if d := getenv("TOOLGATE_SECRETS"); d != "" {
		return d
	}
	return DefaultDir
}

// Ensure returns the content of dir/name, creating it with gen's output
// first when it does not exist. The file is created exclusively, so two
// processes starting at once agree on one value.
func Ensure(dir, name string, gen func() ([]byte, error)) ([]byte, error) {
	path := filepath.Join(dir, name)
	if b, err := os.ReadFile(path); err == nil {
		return b, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	b, err := gen()
	if err != nil {
		return nil, fmt.Errorf("secrets: generate %s: %w", name, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return os.ReadFile(path) // another process made it first
	}
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("secrets: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("secrets: write %s: %w", path, err)
	}
	return b, nil
}

// Read returns the content of dir/name without its trailing newline, with
// an error that says where toolgate up would have put it.
func Read(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "", fmt.Errorf("secrets: %w (toolgate up generates it there; set TOOLGATE_SECRETS to its secrets directory)", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// Random returns n random bytes as a Password followed by a newline: a
// password file's content.
func Random(n int) func() ([]byte, error) {
	return func() ([]byte, error) {
		b := make([]byte, n)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		return []byte(Password(b) + "\n"), nil
	}
}

// Password spells b as a password: "tg" and b in hex. The letters first
// matter: nats-server reads a $VAR's value as a configuration literal, so a
// bare hex string shaped like a number ("2e49fe…", "1234…") is read as one
// and the server refuses its configuration — about one password in 25.
func Password(b []byte) string { return "tg" + hex.EncodeToString(b) }
