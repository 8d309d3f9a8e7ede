package seal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// tagVersion tags what a Tag covers, apart from the seals' MACs: a tag can
// never be taken for a seal, nor a seal for a tag.
const tagVersion = "toolgate-tag/v1"

// Tag is stage's proof that it wrote the fields: "<key id>:<HMAC-SHA256>"
// (base64url) with its first key, "" when kr holds no key of stage. A
// stage marks with it what it stores where others may publish too
// (accumulate's claim messages on a tenant's claimed subjects).
func (kr *Keyring) Tag(stage string, fields ...string) string {
	if !kr.Has(stage) {
		return ""
	}
	k := kr.keys[stage][0]
	return k.ID + ":" + tagOf(k, fields)
}

// TagValid reports, in constant time once the key is found, whether tag is
// Tag(stage, fields...) with any of stage's keys in kr.
func (kr *Keyring) TagValid(stage, tag string, fields ...string) bool {
	kid, mac, ok := strings.Cut(tag, ":")
	if !ok {
		return false
	}
	k, ok := kr.key(stage, kid)
	if !ok {
		return false
	}
	return hmac.Equal([]byte(tagOf(k, fields)), []byte(mac))
}

func tagOf(k Key, fields []string) string {
	h := hmac.New(sha256.New, k.Secret)
	b := field(nil, tagVersion)
	for _, f := range fields {
		b = field(b, f)
	}
	h.Write(b)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}
