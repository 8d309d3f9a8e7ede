package wire

import (
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What a per-executor-group request MAC would cost against the ed25519 v2
// signature execute sends (docs/performance.md, "A request MAC per executor
// group"): a measured option, not built. The MAC covers the same eight lines
// as a v2 (ExecSignedContentV2), with HMAC-SHA256 under the group's key,
// derived from one secret of the execute stage with HKDF-SHA256 and the
// group's name, so each group's executors hold their own key and no other.
// Only these benchmarks use it.

// benchExecRequest is the bench's valid call as execute sends it.
func benchExecRequest() ExecRequest {
	return ExecRequest{CallID: "acme:resp-bench-0", IdempotencyKey: "idem-acme:resp-bench-0", Tool: "create_invoice",
		Body: []byte(`{"currency":"USD","customer_id":"cus_8XyZ","line_items":[{"price_cents":4900,"quantity":3,"sku":"PRO-SEAT"}],"memo":"March seats"}`)}
}

// groupMACKey is group's request MAC key: HKDF-SHA256 of the execute
// stage's secret, bound to the group's name.
func groupMACKey(secret []byte, group string) []byte {
	k, err := hkdf.Key(sha256.New, secret, nil, "toolgate-exec-mac/v1 group="+group, 32)
	if err != nil {
		panic(err)
	}
	return k
}

// macHeader is the header a request MAC would be sent in: t, e and m1, the
// base64 HMAC-SHA256 of the v2 content under the group's key.
func macHeader(key []byte, r ExecRequest, t, e int64) (string, error) {
	content, err := ExecSignedContentV2(t, e, r)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, key)
	m.Write(content)
	return "t=" + strconv.FormatInt(t, 10) + ",e=" + strconv.FormatInt(e, 10) + ",m1=" + base64.StdEncoding.EncodeToString(m.Sum(nil)), nil
}

// macVerify checks h as an executor of the group would: the window, then
// the MAC recomputed over the request it received, compared in constant
// time.
func macVerify(h string, r ExecRequest, now time.Time, key []byte) bool {
	var t, e int64
	var got []byte
	for _, it := range strings.Split(h, ",") {
		k, v, _ := strings.Cut(it, "=")
		switch k {
		case "t":
			t, _ = strconv.ParseInt(v, 10, 64)
		case "e":
			e, _ = strconv.ParseInt(v, 10, 64)
		case "m1":
			got, _ = base64.StdEncoding.DecodeString(v)
		}
	}
	if n := now.Unix(); n+5 < t || n-5 > e || e-t > 60 {
		return false
	}
	content, err := ExecSignedContentV2(t, e, r)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, key)
	m.Write(content)
	return hmac.Equal(m.Sum(nil), got)
}

func TestExecMAC_a_group_key_verifies_its_own_groups_requests_only(t *testing.T) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	payments, example := groupMACKey(secret, "payments"), groupMACKey(secret, "example")
	r, now := benchExecRequest(), time.Unix(1700000000, 0)
	h, err := macHeader(payments, r, now.Unix(), now.Add(DefaultExecLifetime).Unix())
	if err != nil {
		t.Fatal(err)
	}
	if !macVerify(h, r, now, payments) {
		t.Fatal("the group's own key refuses its request")
	}
	if macVerify(h, r, now, example) {
		t.Fatal("another group's key verifies the request")
	}
	r.Body = append([]byte(nil), r.Body...)
	r.Body[10] ^= 1
	if macVerify(h, r, now, payments) {
		t.Fatal("an altered body verifies")
	}
}

func BenchmarkExecRequest_content_v2(b *testing.B) {
	r, now := benchExecRequest(), time.Unix(1700000000, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ExecSignedContentV2(now.Unix(), now.Add(DefaultExecLifetime).Unix(), r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecRequest_sign_ed25519_v2(b *testing.B) {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	r, now := benchExecRequest(), time.Unix(1700000000, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SignExecV2(r, now, now.Add(DefaultExecLifetime), k); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecRequest_sign_hmac_group(b *testing.B) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		b.Fatal(err)
	}
	key := groupMACKey(secret, "payments") // once per group, at start
	r, now := benchExecRequest(), time.Unix(1700000000, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := macHeader(key, r, now.Unix(), now.Add(DefaultExecLifetime).Unix()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecRequest_sign_hmac_group_kept_state keeps the group's keyed
// HMAC state and Resets it per request, as the seals do (a pool per key):
// no pads hashed again, no new state.
func BenchmarkExecRequest_sign_hmac_group_kept_state(b *testing.B) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		b.Fatal(err)
	}
	m := hmac.New(sha256.New, groupMACKey(secret, "payments"))
	r, now := benchExecRequest(), time.Unix(1700000000, 0)
	t, e := now.Unix(), now.Add(DefaultExecLifetime).Unix()
	sum := make([]byte, 0, sha256.Size)
	b.ReportAllocs()
	for b.Loop() {
		content, err := ExecSignedContentV2(t, e, r)
		if err != nil {
			b.Fatal(err)
		}
		m.Reset()
		m.Write(content)
		sum = m.Sum(sum[:0])
		_ = "t=" + strconv.FormatInt(t, 10) + ",e=" + strconv.FormatInt(e, 10) + ",m1=" + base64.StdEncoding.EncodeToString(sum)
	}
}

func BenchmarkExecRequest_verify_ed25519_v2(b *testing.B) {
	pub, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	r, now := benchExecRequest(), time.Unix(1700000000, 0)
	h, err := SignExecV2(r, now, now.Add(DefaultExecLifetime), k)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := VerifyExecWindow(h, r, ExecWindow{Now: now}, pub); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecRequest_verify_hmac_group(b *testing.B) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		b.Fatal(err)
	}
	key := groupMACKey(secret, "payments")
	r, now := benchExecRequest(), time.Unix(1700000000, 0)
	h, err := macHeader(key, r, now.Unix(), now.Add(DefaultExecLifetime).Unix())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !macVerify(h, r, now, key) {
			b.Fatal("refused")
		}
	}
}

// BenchmarkExecRequest_derive_group_key is the HKDF derivation, done once
// per group when the execute stage starts, not per request.
func BenchmarkExecRequest_derive_group_key(b *testing.B) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		groupMACKey(secret, "payments")
	}
}
