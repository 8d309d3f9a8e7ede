package wire

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testKey is a fixed key, so failures reproduce.
func testKey(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
}

func pub(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }

func sigReq() ExecRequest {
	return ExecRequest{CallID: "resp-1-0", IdempotencyKey: "9f86d081884c7d65", Tool: "delete_customer_account", Body: []byte(`{"customer_id":"c_1"}`)}
}

var sigAt = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func TestExecSignature_round_trip_and_the_written_spec(t *testing.T) {
	k := testKey(1)
	r := sigReq()
	h, err := SignExec(r, sigAt, k)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyExec(h, r, sigAt.Add(time.Minute), 0, pub(k)); err != nil {
		t.Fatalf("a genuine signature: %v", err)
	}
	// The package comment's algorithm, written out independently.
	sum := sha256.Sum256(r.Body)
	msg := "toolgate-exec.v1\n" + strconv.FormatInt(sigAt.Unix(), 10) + "\nresp-1-0\n9f86d081884c7d65\ndelete_customer_account\n\n" + hex.EncodeToString(sum[:])
	want := "t=" + strconv.FormatInt(sigAt.Unix(), 10) + ",v1=" + base64.StdEncoding.EncodeToString(ed25519.Sign(k, []byte(msg)))
	if h != want {
		t.Fatalf("header %q\nwant   %q (the documented algorithm)", h, want)
	}
}

func TestExecSignature_rotation_signs_and_verifies_with_any_key(t *testing.T) {
	old, next := testKey(1), testKey(2)
	r := sigReq()
	h, err := SignExec(r, sigAt, next, old)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(h, "v1=") != 2 {
		t.Fatalf("header %q: want one v1 per key", h)
	}
	for _, k := range []ed25519.PrivateKey{old, next} {
		if err := VerifyExec(h, r, sigAt, 0, pub(k)); err != nil {
			t.Errorf("an executor holding one of the keys: %v", err)
		}
	}
	if err := VerifyExec(h+",v3=future", r, sigAt, 0, testKey(9).Public().(ed25519.PublicKey), pub(old)); err != nil {
		t.Errorf("unknown items are ignored and any key may verify: %v", err)
	}
}

func TestExecSignature_refuses_what_was_not_signed_for_this_request(t *testing.T) {
	k := testKey(1)
	r := sigReq()
	good, err := SignExec(r, sigAt, k)
	if err != nil {
		t.Fatal(err)
	}
	ts := strconv.FormatInt(sigAt.Unix(), 10)
	sig := good[strings.Index(good, "v1=")+3:]
	edit := func(f func(*ExecRequest)) ExecRequest { c := sigReq(); f(&c); return c }
	for _, c := range []struct {
		name   string
		header string
		req    ExecRequest
		now    time.Time
		key    ed25519.PublicKey
		want   error
	}{
		{"call id changed", good, edit(func(r *ExecRequest) { r.CallID = "resp-2-0" }), sigAt, pub(k), ErrExecInvalid},
		{"idempotency key changed", good, edit(func(r *ExecRequest) { r.IdempotencyKey = "other" }), sigAt, pub(k), ErrExecInvalid},
		{"tool changed", good, edit(func(r *ExecRequest) { r.Tool = "get_weather" }), sigAt, pub(k), ErrExecInvalid},
		{"made a status query", good, edit(func(r *ExecRequest) { r.Query = QueryStatus }), sigAt, pub(k), ErrExecInvalid},
		{"arguments changed", good, edit(func(r *ExecRequest) { r.Body = []byte(`{"customer_id":"c_2"}`) }), sigAt, pub(k), ErrExecInvalid},
		{"arguments respaced", good, edit(func(r *ExecRequest) { r.Body = []byte(`{"customer_id": "c_1"}`) }), sigAt, pub(k), ErrExecInvalid},
		{"arguments dropped", good, edit(func(r *ExecRequest) { r.Body = nil }), sigAt, pub(k), ErrExecInvalid},
		{"timestamp changed", "t=" + strconv.FormatInt(sigAt.Unix()+1, 10) + ",v1=" + sig, r, sigAt, pub(k), ErrExecInvalid},
		{"stale", good, r, sigAt.Add(DefaultExecTolerance + time.Second), pub(k), ErrExecStale},
		{"from the future", good, r, sigAt.Add(-DefaultExecTolerance - time.Second), pub(k), ErrExecStale},
		{"wrong key", good, r, sigAt, pub(testKey(2)), ErrExecInvalid},
		{"no key", good, r, sigAt, nil, ErrExecInvalid},
		{"missing header", "", r, sigAt, pub(k), ErrExecUnsigned},
		{"no t", "v1=" + sig, r, sigAt, pub(k), ErrExecMalformed},
		{"no v1", "t=" + ts, r, sigAt, pub(k), ErrExecMalformed},
		{"t twice", "t=" + ts + ",t=" + ts + ",v1=" + sig, r, sigAt, pub(k), ErrExecMalformed},
		{"negative t", "t=-" + ts + ",v1=" + sig, r, sigAt, pub(k), ErrExecMalformed},
		{"t not a number", "t=now,v1=" + sig, r, sigAt, pub(k), ErrExecMalformed},
		{"t overflows", "t=99999999999999999999,v1=" + sig, r, sigAt, pub(k), ErrExecMalformed},
		{"v1 not base64", "t=" + ts + ",v1=!!!", r, sigAt, pub(k), ErrExecMalformed},
		{"v1 too short", "t=" + ts + ",v1=" + base64.StdEncoding.EncodeToString([]byte("short")), r, sigAt, pub(k), ErrExecMalformed},
		{"item without =", "t=" + ts + ",v1", r, sigAt, pub(k), ErrExecMalformed},
		{"huge header", "t=" + ts + ",v1=" + sig + ",x=" + strings.Repeat("a", 5000), r, sigAt, pub(k), ErrExecMalformed},
		{"many items", "t=" + ts + strings.Repeat(",x=1", 20) + ",v1=" + sig, r, sigAt, pub(k), ErrExecMalformed},
		{"only an unknown scheme", "t=" + ts + ",v0=" + sig, r, sigAt, pub(k), ErrExecMalformed},
		{"line break in the call id", good, edit(func(r *ExecRequest) { r.CallID = "resp-1-0\nx" }), sigAt, pub(k), ErrExecMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			var keys []ed25519.PublicKey
			if c.key != nil {
				keys = append(keys, c.key)
			}
			err := VerifyExec(c.header, c.req, c.now, 0, keys...)
			if !errors.Is(err, c.want) {
				t.Fatalf("VerifyExec = %v, want %v", err, c.want)
			}
			if RefusedReason(err) == "" {
				t.Fatal("no refusal reason")
			}
		})
	}
}

// TestExecSignature_expiry_is_signed_and_bounds_the_request: a request
// signed with an expiry is good from t to e by the verifier's clock (with
// the skew allowed), never past e nor past the verifier's lifetime, and
// neither t nor e can be edited; without e (an older execute stage) it
// expires at t plus the lifetime, or is refused where the expiry is
// required.
func TestExecSignature_expiry_is_signed_and_bounds_the_request(t *testing.T) {
	k := testKey(1)
	r := sigReq()
	h, err := SignExecUntil(r, sigAt, sigAt.Add(DefaultExecLifetime), k)
	if err != nil {
		t.Fatal(err)
	}
	ts, es := strconv.FormatInt(sigAt.Unix(), 10), strconv.FormatInt(sigAt.Add(DefaultExecLifetime).Unix(), 10)
	if !strings.HasPrefix(h, "t="+ts+",e="+es+",v1=") || strings.Count(h, ",v2=") != 1 {
		t.Fatalf("header %q: want t, e, a v1 and a v2", h)
	}
	// The package comment's v2 algorithm, written out independently.
	sum := sha256.Sum256(r.Body)
	msg := "toolgate-exec.v2\n" + ts + "\n" + es + "\nresp-1-0\n9f86d081884c7d65\ndelete_customer_account\n\n" + hex.EncodeToString(sum[:])
	if !strings.HasSuffix(h, ",v2="+base64.StdEncoding.EncodeToString(ed25519.Sign(k, []byte(msg)))) {
		t.Fatalf("header %q: its v2 is not the documented algorithm's", h)
	}
	// An executor that predates e verifies the v1 as before.
	if err := VerifyExec(h, r, sigAt.Add(time.Second), 0, pub(k)); err != nil {
		t.Fatalf("VerifyExec: %v", err)
	}
	v1 := "t=" + ts + ",v1=" + h[strings.Index(h, "v1=")+3:strings.Index(h, ",v2=")]
	later, _ := SignExecUntil(r, sigAt, sigAt.Add(time.Hour), k)
	win := func(now time.Time) ExecWindow { return ExecWindow{Now: now} }
	for _, c := range []struct {
		name   string
		header string
		w      ExecWindow
		want   error
	}{
		{"at issue", h, win(sigAt), nil},
		{"just before expiry", h, win(sigAt.Add(DefaultExecLifetime)), nil},
		{"within the skew after expiry", h, win(sigAt.Add(DefaultExecLifetime + DefaultExecSkew)), nil},
		{"expired", h, win(sigAt.Add(DefaultExecLifetime + DefaultExecSkew + time.Second)), ErrExecStale},
		{"two minutes old", h, win(sigAt.Add(2 * time.Minute)), ErrExecStale},
		{"issued in the future", h, win(sigAt.Add(-DefaultExecSkew - time.Second)), ErrExecStale},
		{"a shorter lifetime here", h, ExecWindow{Now: sigAt, Lifetime: 30 * time.Second}, ErrExecMalformed},
		{"signed to live an hour", later, win(sigAt), ErrExecMalformed},
		{"expiry edited later", strings.Replace(h, "e="+es, "e="+strconv.FormatInt(sigAt.Unix()+30, 10), 1), win(sigAt), ErrExecInvalid},
		{"issue time edited", strings.Replace(h, "t="+ts, "t="+strconv.FormatInt(sigAt.Unix()+30, 10), 1), win(sigAt.Add(30 * time.Second)), ErrExecInvalid},
		{"both edited forward", strings.Replace(strings.Replace(h, "e="+es, "e="+strconv.FormatInt(sigAt.Unix()+160, 10), 1), "t="+ts, "t="+strconv.FormatInt(sigAt.Unix()+100, 10), 1), win(sigAt.Add(2 * time.Minute)), ErrExecInvalid},
		{"v2 dropped, e kept", strings.Replace(h, h[strings.Index(h, ",v2="):], "", 1), win(sigAt), ErrExecMalformed},
		{"e twice", strings.Replace(h, "e="+es, "e="+es+",e="+es, 1), win(sigAt), ErrExecMalformed},
		{"e not after t", strings.Replace(h, "e="+es, "e="+ts, 1), win(sigAt), ErrExecMalformed},
		{"v1 alone, older stage", v1, win(sigAt.Add(DefaultExecLifetime)), nil},
		{"v1 alone, past t plus the lifetime", v1, win(sigAt.Add(DefaultExecLifetime + DefaultExecSkew + time.Second)), ErrExecStale},
		{"v1 alone where the expiry is required", v1, ExecWindow{Now: sigAt, RequireExpiry: true}, ErrExecMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := VerifyExecWindow(c.header, r, c.w, pub(k))
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("VerifyExecWindow = %v, want %v", err, c.want)
			}
		})
	}
	if _, err := SignExecUntil(r, sigAt, sigAt, k); err == nil {
		t.Fatal("signed an expiry that is not after the issue time")
	}
}

func TestExecSignature_signing_refuses_fields_that_would_be_ambiguous(t *testing.T) {
	r := sigReq()
	r.Tool = "a\nb"
	if _, err := SignExec(r, sigAt, testKey(1)); err == nil {
		t.Fatal("signed a tool name with a line break")
	}
	if _, err := SignExec(sigReq(), sigAt); err == nil {
		t.Fatal("signed with no key")
	}
}

func TestExecPublicKeys_parse_base64_lists_and_pem(t *testing.T) {
	a, b := pub(testKey(1)), pub(testKey(2))
	for _, text := range []string{
		FormatExecPublicKey(a) + "\n" + FormatExecPublicKey(b) + "\n",
		FormatExecPublicKey(a) + "," + FormatExecPublicKey(b),
	} {
		got, err := ParseExecPublicKeys(text)
		if err != nil || len(got) != 2 || !got[0].Equal(a) || !got[1].Equal(b) {
			t.Fatalf("%q: %v %v", text, got, err)
		}
	}
	der, err := x509.MarshalPKIXPublicKey(a)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseExecPublicKeys(string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})))
	if err != nil || len(got) != 1 || !got[0].Equal(a) {
		t.Fatalf("PEM: %v %v", got, err)
	}
	for _, bad := range []string{"", "  \n", "bm90IGEga2V5", "-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n"} {
		if _, err := ParseExecPublicKeys(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// FuzzExecSignature_altered_never_verifies: any change to a signed request
// (its fields, its body, its header) that is not the original never
// verifies.
func FuzzExecSignature_altered_never_verifies(f *testing.F) {
	f.Add("resp-1-0", "key", "create_invoice", "", []byte(`{"a":1}`), "", int64(0))
	f.Add("resp-1-0", "key", "create_invoice", "status", []byte(nil), "t=1,v1=AAAA", int64(60))
	k := testKey(7)
	orig := sigReq()
	h, err := SignExec(orig, sigAt, k)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, callID, key, tool, query string, body []byte, header string, skew int64) {
		r := ExecRequest{CallID: callID, IdempotencyKey: key, Tool: tool, Query: query, Body: body}
		if header == "" {
			header = h
		}
		now := sigAt.Add(time.Duration(skew%600) * time.Second)
		err := VerifyExec(header, r, now, 0, pub(k))
		same := r.CallID == orig.CallID && r.IdempotencyKey == orig.IdempotencyKey && r.Tool == orig.Tool &&
			r.Query == orig.Query && bytes.Equal(r.Body, orig.Body)
		if err == nil && !(same && headerSignsAt(header, h)) {
			t.Fatalf("an altered request verified: %+v header %q", r, header)
		}
	})
}

// headerSignsAt reports whether header carries the original t and v1 (an
// ordering or an extra unknown item may differ).
func headerSignsAt(header, orig string) bool {
	s, err := parseSignature(header)
	o, _ := parseSignature(orig)
	if err != nil || s.t != o.t || s.hasE {
		return false
	}
	for _, sig := range s.v1 {
		if bytes.Equal(sig, o.v1[0]) {
			return true
		}
	}
	return false
}

func BenchmarkExecSign(b *testing.B) {
	k, r := testKey(1), sigReq()
	r.Body = bytes.Repeat([]byte(`{"k":"v"},`), 100)
	for b.Loop() {
		if _, err := SignExec(r, sigAt, k); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecVerify(b *testing.B) {
	k, r := testKey(1), sigReq()
	r.Body = bytes.Repeat([]byte(`{"k":"v"},`), 100)
	h, err := SignExec(r, sigAt, k)
	if err != nil {
		b.Fatal(err)
	}
	p := pub(k)
	for b.Loop() {
		if err := VerifyExec(h, r, sigAt, 0, p); err != nil {
			b.Fatal(err)
		}
	}
}
