package redact

import "strings"

// Placeholder replaces every redacted value.
const Placeholder = "[REDACTED]"

// Options say which fields of a tool's arguments are sensitive beyond the
// built-in detectors.
type Options struct {
	// SensitiveFields are field names or JSON pointers marked sensitive in
	// the tool definition. A name ("iban") matches an object member of that
	// name at any depth, case-insensitively. A pointer ("/payer/iban",
	// RFC 6901, "~0" and "~1" escapes) matches that one location; a "*"
	// segment matches any member or array index ("/cards/*/number"). The
	// whole value of a sensitive field, object or array included, is
	// replaced. In text that is not valid JSON a pointer falls back to its
	// last segment used as a name.
	SensitiveFields []string
}

// matcher is Options compiled for one call.
type matcher struct {
	names    map[string]bool // lower-cased names
	pointers [][]string      // unescaped pointer segments
}

func newMatcher(opts Options) matcher {
	var m matcher
	for _, f := range opts.SensitiveFields {
		if f == "" {
			continue
		}
		if !strings.HasPrefix(f, "/") {
			if m.names == nil {
				m.names = map[string]bool{}
			}
			m.names[strings.ToLower(f)] = true
			continue
		}
		segs := strings.Split(f[1:], "/")
		for i, s := range segs {
			segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
		}
		m.pointers = append(m.pointers, segs)
	}
	return m
}

// textNames returns the names used when scanning text that is not JSON:
// the names, and the last segment of every pointer.
func (m matcher) textNames() map[string]bool {
	if len(m.pointers) == 0 {
		return m.names
	}
	names := map[string]bool{}
	for n := range m.names {
		names[n] = true
	}
	for _, p := range m.pointers {
		if last := p[len(p)-1]; last != "" && last != "*" {
			names[strings.ToLower(last)] = true
		}
	}
	return names
}

// sensitive reports whether the member key at path (path includes key) is
// marked sensitive by the options or by the built-in names.
func (m matcher) sensitive(key string, path []string) bool {
	if isSecretName(key) || m.names[strings.ToLower(key)] {
		return true
	}
	for _, p := range m.pointers {
		if pointerMatches(p, path) {
			return true
		}
	}
	return false
}

func pointerMatches(pointer, path []string) bool {
	if len(pointer) != len(path) {
		return false
	}
	for i, seg := range pointer {
		if seg != "*" && seg != path[i] {
			return false
		}
	}
	return true
}

// secretName reports whether n, a normalised field name (lower case, no
// "_", "-" or "."), is one whose value is a secret whatever it looks like.
func secretName(n string) bool {
	switch n {
	case "password", "passwd", "pwd", "pass", "passphrase",
		"secret", "token", "apikey", "auth", "authorization",
		"credential", "credentials", "cookie", "setcookie",
		"sessionid", "session", "pin", "otp", "cvv",
		"cvc", "cvv2", "ssn", "privatekey", "accesskey",
		"secretkey", "signingkey", "encryptionkey", "xapikey":
		return true
	}
	return false
}

// secretSuffixes catch compound names: client_secret, access_token,
// db_password, stripe_api_key, ...
func secretSuffixes() []string {
	return []string{"password", "passwd", "secret", "token", "apikey", "privatekey", "secretkey", "accesskey", "credentials", "passphrase"}
}

// isSecretName reports whether a field of this name holds a secret.
// "max_tokens" and "token_count" are not secret names.
func isSecretName(name string) bool {
	n := normalize(name)
	if n == "" {
		return false
	}
	if secretName(n) {
		return true
	}
	for _, s := range secretSuffixes() {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return strings.Contains(n, "password") || strings.Contains(n, "secret")
}

// isKeyLikeName reports whether a field of this name may hold a key or
// token: its value is redacted when it looks random (see looksRandom).
func isKeyLikeName(name string) bool {
	n := normalize(name)
	return strings.Contains(n, "key") || strings.Contains(n, "token") ||
		strings.Contains(n, "auth") || strings.Contains(n, "sig")
}

func normalize(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ':
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
