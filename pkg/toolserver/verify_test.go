package toolserver

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
)

func testSigner(t *testing.T) *execute.Signer {
	t.Helper()
	_, s := testKeys(t)
	return s
}

// testKeys is a fresh private key and the execute gate's signer of it.
func testKeys(t *testing.T) (ed25519.PrivateKey, *execute.Signer) {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := execute.NewSigner(k)
	if err != nil {
		t.Fatal(err)
	}
	return k, s
}

// servedTool serves "delete_customer_account" verifying with signer's key,
// counting the handler's runs.
func servedTool(t *testing.T, nc *nats.Conn, signer *execute.Signer, opts ...Option) *atomic.Int32 {
	t.Helper()
	var runs atomic.Int32
	srv, err := New(nc, "accounts", "1.0.0", append([]Option{PublicKey(signer.Public()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	if err := srv.Handle("delete_customer_account", func(ctx context.Context, c Call) (any, error) {
		runs.Add(1)
		return map[string]any{"deleted": true}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return &runs
}

// request sends what an attacker on the broker would: a hand-made request
// on toolgate.exec.<tool>, with the headers given.
func request(t *testing.T, nc *nats.Conn, tool, args string, h nats.Header) *nats.Msg {
	t.Helper()
	m := nats.NewMsg(wire.Exec(tool))
	m.Data = []byte(args)
	m.Header = h
	resp, err := nc.RequestMsg(m, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func refusedReply(t *testing.T, resp *nats.Msg, reason string) {
	t.Helper()
	var r wire.ExecReply
	if err := json.Unmarshal(resp.Data, &r); err != nil || r.OK || !strings.Contains(r.Error, "refused") {
		t.Fatalf("reply %s: want ok:false saying it was refused", resp.Data)
	}
	if got := resp.Header.Get(wire.HeaderSignatureRefused); got != reason {
		t.Fatalf("%s: %q, want %q", wire.HeaderSignatureRefused, got, reason)
	}
}

func signed(t *testing.T, k ed25519.PrivateKey, at time.Time, tool, callID, key, query, body string) nats.Header {
	t.Helper()
	h := nats.Header{}
	h.Set(wire.HeaderCallID, callID)
	h.Set(wire.HeaderIdemKey, key)
	if query != "" {
		h.Set(wire.HeaderQuery, query)
	}
	sig, err := wire.SignExec(wire.ExecRequest{CallID: callID, IdempotencyKey: key, Tool: tool, Query: query, Body: []byte(body)}, at, k)
	if err != nil {
		t.Fatal(err)
	}
	h.Set(wire.HeaderSignature, sig)
	return h
}

func TestServer_refuses_a_direct_unsigned_request_and_never_runs_the_tool(t *testing.T) {
	nc := replayConn(t, testenv.RunJetStream(t))
	runs := servedTool(t, nc, testSigner(t))
	h := nats.Header{}
	h.Set(wire.HeaderCallID, "forged-0")
	h.Set(wire.HeaderIdemKey, "forged")
	refusedReply(t, request(t, nc, "delete_customer_account", `{"customer_id":"c_victim"}`, h), wire.RefusedUnsigned)
	// Nor may anyone ask it what it ran.
	h.Set(wire.HeaderQuery, wire.QueryStatus)
	refusedReply(t, request(t, nc, "delete_customer_account", ``, h), wire.RefusedUnsigned)
	if n := runs.Load(); n != 0 {
		t.Fatalf("the handler ran %d times for an unsigned request", n)
	}
}

func TestServer_refuses_altered_stale_and_misdirected_signed_requests(t *testing.T) {
	nc := replayConn(t, testenv.RunJetStream(t))
	k, s := testKeys(t)
	otherKey, _ := testKeys(t)
	runs := servedTool(t, nc, s)
	other := servedOther(t, nc, s)
	now := time.Now()
	const tool, args = "delete_customer_account", `{"customer_id":"c_1"}`
	for _, c := range []struct {
		name, tool, args string
		h                nats.Header
		reason           string
	}{
		{"altered arguments", tool, `{"customer_id":"c_victim"}`, signed(t, k, now, tool, "r-0", "k", "", args), wire.RefusedInvalid},
		{"altered call id", tool, args, with(signed(t, k, now, tool, "r-0", "k", "", args), wire.HeaderCallID, "r-9"), wire.RefusedInvalid},
		{"altered idempotency key", tool, args, with(signed(t, k, now, tool, "r-0", "k", "", args), wire.HeaderIdemKey, "k2"), wire.RefusedInvalid},
		{"signed for another tool", tool, args, signed(t, k, now, "get_weather", "r-0", "k", "", args), wire.RefusedInvalid},
		{"a status query turned into a call", tool, "", without(signed(t, k, now, tool, "r-0", "k", wire.QueryStatus, ""), wire.HeaderQuery), wire.RefusedInvalid},
		{"stale", tool, args, signed(t, k, now.Add(-6*time.Minute), tool, "r-0", "k", "", args), wire.RefusedStale},
		{"from the future", tool, args, signed(t, k, now.Add(6*time.Minute), tool, "r-0", "k", "", args), wire.RefusedStale},
		{"signed by another key", tool, args, signed(t, otherKey, now, tool, "r-0", "k", "", args), wire.RefusedInvalid},
		{"malformed", tool, args, with(signed(t, k, now, tool, "r-0", "k", "", args), wire.HeaderSignature, "t=1"), wire.RefusedMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			refusedReply(t, request(t, nc, c.tool, c.args, c.h), c.reason)
		})
	}
	if n := runs.Load() + other.Load(); n != 0 {
		t.Fatalf("handlers ran %d times for refused requests", n)
	}
	// The genuine one, as the execute gate sends it.
	rep, err := (&execute.NATS{NC: nc, Signer: s}).Execute(context.Background(), execute.Request{Tool: tool, CallID: "r-0", IdempotencyKey: "k", Arguments: []byte(args)})
	if err != nil || !rep.OK || runs.Load() != 1 {
		t.Fatalf("signed by the execute gate: %+v %v (ran %d), want it run once", rep, err, runs.Load())
	}
}

func TestServer_refusal_is_not_run_for_the_execute_gate(t *testing.T) {
	nc := replayConn(t, testenv.RunJetStream(t))
	runs := servedTool(t, nc, testSigner(t)) // trusts another key than the gate's
	ex := &execute.NATS{NC: nc, Signer: testSigner(t)}
	req := execute.Request{Tool: "delete_customer_account", CallID: "r-0", IdempotencyKey: "k", Arguments: []byte(`{}`)}
	_, err := ex.Execute(context.Background(), req)
	if !errors.Is(err, execute.ErrNotRun) || !errors.Is(err, execute.ErrRefused) {
		t.Fatalf("error %v, want ErrNotRun (ErrRefused): the tool said it did not run", err)
	}
	if _, err := ex.Status(context.Background(), req); !errors.Is(err, execute.ErrNoStatus) {
		t.Fatalf("status: %v, want ErrNoStatus", err)
	}
	if runs.Load() != 0 {
		t.Fatal("the handler ran")
	}
}

func TestServer_insecure_accepts_unsigned_requests(t *testing.T) {
	nc := replayConn(t, testenv.RunJetStream(t))
	srv, err := New(nc, "open", "1.0.0", Insecure())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if err := srv.Handle("ping", func(context.Context, Call) (any, error) { return "pong", nil }); err != nil {
		t.Fatal(err)
	}
	resp := request(t, nc, "ping", `{}`, nats.Header{})
	if string(resp.Data) != `{"ok":true,"result":"pong"}` {
		t.Fatalf("reply %s", resp.Data)
	}
}

func TestServer_finds_the_public_key_or_refuses_to_start(t *testing.T) {
	nc := replayConn(t, testenv.RunJetStream(t))
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("TOOLGATE_EXEC_PUBLIC_KEY", "")
	t.Setenv("TOOLGATE_SECRETS", "")
	if _, err := New(nc, "nokey", "1.0.0"); err == nil || !strings.Contains(err.Error(), "TOOLGATE_EXEC_PUBLIC_KEY") || !strings.Contains(err.Error(), "PublicKey") {
		t.Fatalf("New without any key: %v, want an error saying how to give one", err)
	}
	s := testSigner(t)
	secrets := filepath.Join(dir, "elsewhere")
	ensured, err := execute.EnsureSigner(secrets)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "exec.pub")
	if err := os.WriteFile(keyFile, []byte(s.PublicText()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, env, value string
		signer           *execute.Signer
	}{
		{"base64_in_env", "TOOLGATE_EXEC_PUBLIC_KEY", strings.TrimSpace(s.PublicText()), s},
		{"file_in_env", "TOOLGATE_EXEC_PUBLIC_KEY", keyFile, s},
		{"secrets_dir_of_toolgate_up", "TOOLGATE_SECRETS", secrets, ensured},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(c.env, c.value)
			srv, err := New(nc, "found", "1.0.0")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			tool := c.name
			if err := srv.Handle(tool, func(context.Context, Call) (any, error) { return 1, nil }); err != nil {
				t.Fatal(err)
			}
			rep, err := (&execute.NATS{NC: nc, Signer: c.signer}).Execute(context.Background(), execute.Request{Tool: tool, CallID: "c", IdempotencyKey: "k", Arguments: []byte(`{}`)})
			if err != nil || !rep.OK {
				t.Fatalf("%+v %v", rep, err)
			}
			refusedReply(t, request(t, nc, tool, `{}`, nats.Header{}), wire.RefusedUnsigned)
		})
	}
	t.Setenv("TOOLGATE_SECRETS", "")
	t.Setenv("TOOLGATE_EXEC_PUBLIC_KEY", filepath.Join(dir, "missing.pub"))
	if _, err := New(nc, "badkey", "1.0.0"); err == nil {
		t.Fatal("a TOOLGATE_EXEC_PUBLIC_KEY that is neither a key nor a file was accepted")
	}
}

func without(h nats.Header, k string) nats.Header {
	h.Del(k)
	return h
}

func with(h nats.Header, k, v string) nats.Header {
	h.Set(k, v)
	return h
}

// servedOther serves get_weather with the same key, so a request signed for
// it and sent elsewhere shows it was not the same tool.
func servedOther(t *testing.T, nc *nats.Conn, s *execute.Signer) *atomic.Int32 {
	t.Helper()
	var runs atomic.Int32
	srv, err := New(nc, "weather", "1.0.0", PublicKey(s.Public()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	if err := srv.Handle("get_weather", func(context.Context, Call) (any, error) { runs.Add(1); return nil, nil }); err != nil {
		t.Fatal(err)
	}
	return &runs
}
