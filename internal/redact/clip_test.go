package redact

import (
	"strings"
	"testing"
)

func TestClip_and_IsSHA256Hex(t *testing.T) {
	if got := Clip(strings.Repeat("a", 65)); got != strings.Repeat("a", 64)+"..." {
		t.Fatalf("Clip = %q", got)
	}
	if Clip("short") != "short" {
		t.Fatal("Clip changed a short value")
	}
	h := strings.Repeat("0f", 32)
	if !IsSHA256Hex(h) || IsSHA256Hex(strings.ToUpper(h)) || IsSHA256Hex(h[:63]) || IsSHA256Hex("sha256:"+h[7:]) {
		t.Fatal("IsSHA256Hex")
	}
}
