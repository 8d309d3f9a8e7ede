package redact

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

var (
	privateKeyRe = regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|$)`)
	urlCredsRe   = regexp.MustCompile(`(://[^\s:/@"']+:)[^\s/@"']+@`)
	bearerRe     = regexp.MustCompile(`(?i)\b(bearer)\s+[A-Za-z0-9\-._~+/]+=*`)
	// knownKeyRe matches tokens whose shape gives them away, even cut short
	// by a truncated response.
	knownKeyRe = regexp.MustCompile(`\b(?:` +
		`sk-ant-[A-Za-z0-9_\-]{8,}` +
		`|sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}` +
		`|(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}` +
		`|gh[pousr]_[A-Za-z0-9]{20,}` +
		`|github_pat_[A-Za-z0-9_]{20,}` +
		`|xox[abposr]-[A-Za-z0-9\-]{8,}` +
		`|AIza[0-9A-Za-z_\-]{30,}` +
		`|glpat-[A-Za-z0-9_\-]{16,}` +
		`|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}` +
		`|(?:hf|npm)_[A-Za-z0-9]{30,}` +
		`|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*` +
		`)`)
	emailRe = regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}`)
)

// Text returns s with every secret the built-in detectors recognise masked:
// private key blocks, passwords in URLs, values after secret-like names
// ("password=...", "api_key: ...", "\"token\": \"...\"", and random-looking
// values after key-like names), bearer tokens, API keys of known shape
// (OpenAI, Anthropic, AWS, GitHub, Slack, Google, GitLab, Stripe, Hugging
// Face, npm, JWTs), card numbers that pass the Luhn check, and email
// addresses. Secrets become "[REDACTED]"; an email keeps its first character
// and domain ("j***@example.com"), enough to tell addresses apart in an
// audit without exposing them.
func Text(s string) string {
	return redactText(s, nil)
}

// redactText is Text with extra sensitive field names (lower case).
func redactText(s string, names map[string]bool) string {
	if s == "" {
		return s
	}
	if strings.Contains(s, "PRIVATE KEY-----") {
		s = privateKeyRe.ReplaceAllLiteralString(s, Placeholder)
	}
	if strings.Contains(s, "://") {
		s = urlCredsRe.ReplaceAllString(s, "${1}"+Placeholder+"@")
	}
	if strings.ContainsAny(s, ":=") {
		s = redactPairs(s, names)
	}
	if containsFold(s, "bearer") {
		s = bearerRe.ReplaceAllString(s, "${1} "+Placeholder)
	}
	if len(s) >= 10 && hasKeyPrefix(s) {
		s = knownKeyRe.ReplaceAllLiteralString(s, Placeholder)
	}
	s = redactCards(s)
	if strings.Contains(s, "@") {
		s = emailRe.ReplaceAllStringFunc(s, maskEmail)
	}
	return s
}

// keyPrefixes are the fixed starts of knownKeyRe's alternatives: a text
// with none of them skips the regular expression.
func keyPrefixes() []string {
	return []string{"sk-", "sk_", "rk_", "AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA",
		"gho_", "ghp_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AIza", "glpat-", "hf_", "npm_", "eyJ"}
}

func hasKeyPrefix(s string) bool {
	for _, p := range keyPrefixes() {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// maskEmail keeps the first character of the local part and the domain.
func maskEmail(addr string) string {
	at := strings.LastIndexByte(addr, '@')
	_, size := utf8.DecodeRuneInString(addr)
	if at <= 0 || size > at {
		return "[EMAIL]"
	}
	return addr[:size] + "***" + addr[at:]
}

// containsFold reports whether s contains the lower-case ASCII word w in
// any letter case, without allocating.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		j := 0
		for j < len(w) && s[i+j]|0x20 == w[j] {
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
}
