package execute

import (
	"context"
	"crypto/ed25519"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/execute/exectest"
	"github.com/toolgate/toolgate/pkg/wire"
)

func testSigner(t *testing.T) *Signer {
	t.Helper()
	s, err := GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// verifyingTool is an HTTP tool that verifies as the README tells one to:
// wire.VerifyExec over the headers, its own tool name and the body bytes.
func verifyingTool(t *testing.T, tool string, keys []ed25519.PublicKey, ran *int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		err := wire.VerifyExec(r.Header.Get(wire.HeaderSignature), wire.ExecRequest{
			CallID: r.Header.Get(wire.HeaderCallID), IdempotencyKey: r.Header.Get(wire.HeaderIdemKey),
			Tool: tool, Query: r.Header.Get(wire.HeaderQuery), Body: body,
		}, time.Now(), 0, keys...)
		if err != nil {
			w.Header().Set(wire.HeaderSignatureRefused, wire.RefusedReason(err))
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		if r.Header.Get(wire.HeaderQuery) != "" {
			io.WriteString(w, `{"known":true,"ok":true,"result":"earlier"}`)
			return
		}
		*ran++
		io.WriteString(w, `{"ok":true,"result":"ran"}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTP_tool_verifying_with_pkg_wire_gets_a_valid_signature(t *testing.T) {
	s := testSigner(t)
	ran := 0
	srv := verifyingTool(t, "charge", s.Public(), &ran)
	h := &HTTP{URL: srv.URL, StatusURL: srv.URL + "/status", Signer: s, Allow: loopback(t)}
	got, err := h.Execute(context.Background(), req())
	if err != nil || !got.OK || ran != 1 {
		t.Fatalf("signed call: %+v %v (ran %d): want it verified and run", got, err, ran)
	}
	st, err := h.Status(context.Background(), req())
	if err != nil || !st.Known {
		t.Fatalf("signed status query: %+v %v: want it verified and answered", st, err)
	}
}

func TestHTTP_tool_that_refuses_the_signature_did_not_run(t *testing.T) {
	ran := 0
	srv := verifyingTool(t, "charge", testSigner(t).Public(), &ran) // trusts another key
	for _, s := range []*Signer{nil, testSigner(t)} {
		_, err := (&HTTP{URL: srv.URL, StatusURL: srv.URL, Signer: s, Allow: loopback(t)}).Execute(context.Background(), req())
		if !errors.Is(err, ErrNotRun) || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "exec-signing.pub") {
			t.Fatalf("error %v, want ErrNotRun and ErrRefused saying which key to give the tool", err)
		}
		if _, err := (&HTTP{URL: srv.URL, StatusURL: srv.URL, Signer: s, Allow: loopback(t)}).Status(context.Background(), req()); !errors.Is(err, ErrNoStatus) || !errors.Is(err, ErrRefused) {
			t.Fatalf("status: %v, want ErrNoStatus (refused)", err)
		}
	}
	if ran != 0 {
		t.Fatalf("the tool ran %d times", ran)
	}
}

func TestSigningKeys_are_made_once_in_the_secrets_dir_and_read_back(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secrets")
	s1, err := EnsureSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := EnsureSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !s1.Public()[0].Equal(s2.Public()[0]) {
		t.Fatal("a second start made another key")
	}
	pubText, err := os.ReadFile(filepath.Join(dir, PublicKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	pubs, err := wire.ParseExecPublicKeys(string(pubText))
	if err != nil || len(pubs) != 1 || !pubs[0].Equal(s1.Public()[0]) {
		t.Fatalf("%s holds %v (%v), want the signer's public key", PublicKeyFile, pubs, err)
	}
	loaded, err := LoadSigner(filepath.Join(dir, SigningKeyFile))
	if err != nil || !loaded.Public()[0].Equal(s1.Public()[0]) {
		t.Fatalf("LoadSigner: %v", err)
	}
	other := testSigner(t)
	if err := os.WriteFile(filepath.Join(dir, PublicKeyFile), []byte(other.PublicText()), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureSigner(dir); err == nil || !strings.Contains(err.Error(), "does not hold the public key") {
		t.Fatalf("a public key file of another key: %v, want an error", err)
	}
}

func TestSigningKeys_rotation_file_signs_with_every_key(t *testing.T) {
	a, b := testSigner(t), testSigner(t)
	pa, _ := MarshalSigningKey(a.keys[0])
	pb, _ := MarshalSigningKey(b.keys[0])
	s, err := ParseSigningKeys(append(pb, pa...))
	if err != nil || len(s.Public()) != 2 || !s.Public()[0].Equal(b.Public()[0]) {
		t.Fatalf("two PEM blocks: %v", err)
	}
	h, err := s.header(req(), "", req().Arguments, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := req()
	for _, k := range []*Signer{a, b} {
		if err := wire.VerifyExec(h, wire.ExecRequest{CallID: r.CallID, IdempotencyKey: r.IdempotencyKey, Tool: r.Tool, Body: r.Arguments}, time.Now(), 0, k.Public()...); err != nil {
			t.Errorf("an executor with one of the keys: %v", err)
		}
	}
	for _, bad := range []string{"", "not pem", "-----BEGIN EC PRIVATE KEY-----\nAA==\n-----END EC PRIVATE KEY-----\n"} {
		if _, err := ParseSigningKeys([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// By default the execute stage signs once a request, a v2 alone, and what
// it sends verifies as pkg/toolserver checks it (the expiry required).
// WithV1 (--exec-signature-v1=true) adds a v1 that an executor written
// before the expiry verifies as it always did.
func TestSigner_signs_a_v2_alone_unless_told_to_add_a_v1(t *testing.T) {
	s := testSigner(t)
	r := wire.ExecRequest{CallID: "resp-1-0", IdempotencyKey: "k", Tool: "create_invoice", Body: []byte(`{"amount":5}`)}
	now := time.Now()
	alone, err := s.Sign(r, now)
	if err != nil {
		t.Fatal(err)
	}
	both, err := s.WithV1().Sign(r, now)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(alone, "v1=") || !strings.Contains(alone, ",v2=") || !strings.Contains(both, ",v1=") || !strings.Contains(both, ",v2=") {
		t.Fatalf("default %q, with v1 %q", alone, both)
	}
	for _, h := range []string{alone, both} {
		if err := wire.VerifyExecWindow(h, r, wire.ExecWindow{Now: now, RequireExpiry: true}, s.Public()...); err != nil {
			t.Fatalf("%s: %v", h, err)
		}
	}
	if !exectest.V1Accepts(t, both, r, s.Public()[0]) {
		t.Fatal("an executor that reads only v1 refuses what WithV1 signs")
	}
	if exectest.V1Accepts(t, alone, r, s.Public()[0]) {
		t.Fatal("a v2 alone carries a v1")
	}
}
