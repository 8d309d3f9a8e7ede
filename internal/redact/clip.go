package redact

// Clip keeps a value read from an untrusted record (a key-value entry, a
// dead letter) short enough to quote in an error or a log line: its first
// 64 bytes and "...".
func Clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// IsSHA256Hex reports whether s is a sha256 in lower-case hex, as toolgate
// writes argument hashes and fingerprints.
func IsSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
