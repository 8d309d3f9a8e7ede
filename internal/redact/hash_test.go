package redact

import (
	"strings"
	"testing"
)

func TestHash_is_sha256_hex_with_prefix(t *testing.T) {
	// sha256("") is a well-known constant.
	if got := Hash(nil); got != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("Hash(nil) = %s", got)
	}
	a, b := Hash([]byte(`{"a":1}`)), Hash([]byte(`{"a":2}`))
	if a == b || !strings.HasPrefix(a, "sha256:") || len(a) != len("sha256:")+64 {
		t.Fatalf("hashes %s %s", a, b)
	}
	if Hash([]byte(`{"a":1}`)) != a {
		t.Fatal("Hash is not deterministic")
	}
}
