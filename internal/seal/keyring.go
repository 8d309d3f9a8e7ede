package seal

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/internal/secrets"
)

// KeySize is the size of a seal key's secret in bytes.
const KeySize = 32

// Key is one seal key of a stage: its id (named in every seal it makes) and
// its secret.
type Key struct {
	ID     string
	Secret []byte
	macs   *sync.Pool // HMAC states keyed with Secret (mac.go); set by New
}

// Keyring holds the seal keys of some stages: a stage holds only its own,
// the execute stage all of them. Per stage the first key seals and every
// key verifies, so a key is rotated by putting a new one first and removing
// the old one once no sealed call in flight needs it.
type Keyring struct {
	keys map[string][]Key
}

var kidRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,32}$`)

// New is a keyring of keys per stage; each stage needs at least one key,
// ids unique within the stage, secrets of KeySize bytes.
func New(keys map[string][]Key) (*Keyring, error) {
	kr := &Keyring{keys: map[string][]Key{}}
	for st, ks := range keys {
		if !slices.Contains(Sealing(), st) {
			return nil, fmt.Errorf("seal: keys for %q, which seals nothing (stages that seal: %s)", st, strings.Join(Sealing(), ", "))
		}
		if len(ks) == 0 {
			return nil, fmt.Errorf("seal: stage %s has no key", st)
		}
		seen := map[string]bool{}
		for _, k := range ks {
			switch {
			case !kidRE.MatchString(k.ID):
				return nil, fmt.Errorf("seal: stage %s: key id %q: use 1-32 letters, digits, '.', '_' or '-'", st, k.ID)
			case seen[k.ID]:
				return nil, fmt.Errorf("seal: stage %s: key id %q appears twice", st, k.ID)
			case len(k.Secret) != KeySize:
				return nil, fmt.Errorf("seal: stage %s: key %s is %d bytes, want %d", st, k.ID, len(k.Secret), KeySize)
			}
			seen[k.ID] = true
			secret := slices.Clone(k.Secret)
			kr.keys[st] = append(kr.keys[st], Key{ID: k.ID, Secret: secret, macs: macPool(secret)})
		}
	}
	return kr, nil
}

// Has reports whether kr holds keys of stage.
func (kr *Keyring) Has(stage string) bool { return kr != nil && len(kr.keys[stage]) > 0 }

// Stages lists the stages kr holds keys of, in Sealing order.
func (kr *Keyring) Stages() []string {
	var out []string
	for _, st := range Sealing() {
		if kr.Has(st) {
			out = append(out, st)
		}
	}
	return out
}

// Only is the part of kr a process running stages needs (Needed).
func (kr *Keyring) Only(stages []string) *Keyring {
	out := &Keyring{keys: map[string][]Key{}}
	for _, st := range Needed(stages) {
		if kr.Has(st) {
			out.keys[st] = kr.keys[st]
		}
	}
	return out
}

func (kr *Keyring) key(stage, id string) (Key, bool) {
	if kr == nil {
		return Key{}, false
	}
	for _, k := range kr.keys[stage] {
		if k.ID == id {
			return k, true
		}
	}
	return Key{}, false
}

// Needed lists the stages whose keys a process running stages must hold:
// each sealing stage its own, and the execute stage every one of them.
func Needed(stages []string) []string {
	if slices.Contains(stages, Execute) {
		return Sealing()
	}
	var out []string
	for _, st := range Sealing() {
		if slices.Contains(stages, st) {
			out = append(out, st)
		}
	}
	return out
}

// FileName is the key file of stage in a keys directory.
func FileName(stage string) string { return "seal-" + stage + ".key" }

// Load reads the keys the stages of a process need (Needed) from dir: a
// file FileName(stage) per stage, one key a line, "<kid> <64 hex digits>",
// the first line sealing; blank lines and lines starting with # are skipped.
func Load(dir string, stages []string) (*Keyring, error) {
	keys := map[string][]Key{}
	for _, st := range Needed(stages) {
		path := filepath.Join(dir, FileName(st))
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("seal: %w (the %s stage's seal keys; set TOOLGATE_SEAL_KEYS to the directory that holds them)", err, st)
		}
		if keys[st], err = ParseKeys(b); err != nil {
			return nil, fmt.Errorf("seal: %s: %w", path, err)
		}
	}
	return New(keys)
}

// Ensure is Load, first generating the key file of each stage that has
// none (secrets.Ensure: made once, kept across restarts).
func Ensure(dir string, stages []string) (*Keyring, error) {
	for _, st := range Needed(stages) {
		if _, err := secrets.Ensure(dir, FileName(st), NewKeyLine); err != nil {
			return nil, err
		}
	}
	return Load(dir, stages)
}

// NewKeyLine is a fresh key file line: "k<8 hex> <64 hex>\n".
func NewKeyLine() ([]byte, error) {
	b := make([]byte, 4+KeySize)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return []byte("k" + hex.EncodeToString(b[:4]) + " " + hex.EncodeToString(b[4:]) + "\n"), nil
}

// Ephemeral is a keyring of fresh random keys for stages (Needed), for a
// process that runs every stage itself and keeps no key files.
func Ephemeral(stages []string) (*Keyring, error) {
	keys := map[string][]Key{}
	for _, st := range Needed(stages) {
		line, err := NewKeyLine()
		if err != nil {
			return nil, fmt.Errorf("seal: %w", err)
		}
		if keys[st], err = ParseKeys(line); err != nil {
			return nil, err
		}
	}
	return New(keys)
}

// ParseKeys reads a key file.
func ParseKeys(b []byte) ([]Key, error) {
	var keys []Key
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: want \"<key id> <%d hex digits>\"", i+1, 2*KeySize)
		}
		secret, err := hex.DecodeString(f[1])
		if err != nil || len(secret) != KeySize {
			return nil, fmt.Errorf("line %d: key %s: want %d hex digits", i+1, f[0], 2*KeySize)
		}
		keys = append(keys, Key{ID: f[0], Secret: secret})
	}
	if len(keys) == 0 {
		return nil, errors.New("no key in the file")
	}
	return keys, nil
}
