package console

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// minTokenLen is the shortest token accepted: a guessable token on a
// network address is no access control.
const minTokenLen = 16

// ReadTokens reads a token file: one `<role> <name> <token>` a line; blank
// lines and lines starting with # are skipped. It returns token → role and
// token → name. Errors name the line, never the token.
func ReadTokens(r io.Reader) (map[string]Role, map[string]string, error) {
	roles, names := map[string]Role{}, map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, nil, fmt.Errorf("console: tokens line %d: want `<role> <name> <token>`", n)
		}
		role, name, tok := Role(f[0]), f[1], f[2]
		switch {
		case !role.valid():
			return nil, nil, fmt.Errorf("console: tokens line %d: role %q is not viewer, approver or operator", n, clipName(f[0]))
		case !validName(name):
			return nil, nil, fmt.Errorf("console: tokens line %d: name %q: want 1-64 letters, digits, '.', '_', '-' or '@'", n, clipName(name))
		case len(tok) < minTokenLen:
			return nil, nil, fmt.Errorf("console: tokens line %d: the token is shorter than %d characters", n, minTokenLen)
		}
		if _, dup := roles[tok]; dup {
			return nil, nil, fmt.Errorf("console: tokens line %d: the token is listed twice", n)
		}
		roles[tok], names[tok] = role, name
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("console: tokens: %w", err)
	}
	return roles, names, nil
}

// LoadTokens is ReadTokens of a file.
func LoadTokens(path string) (map[string]Role, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("console: tokens: %w", err)
	}
	defer f.Close()
	return ReadTokens(f)
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._-@", c)) {
			return false
		}
	}
	return true
}

func clipName(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}
