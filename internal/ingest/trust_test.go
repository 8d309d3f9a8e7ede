package ingest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/identity"
	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// weatherStream is one Anthropic tool call, event by event; city names the
// argument.
func weatherStream(city string) []string {
	return []string{
		anthropicStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"get_weather","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"` + city + `\"}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"}}`,
		anthropicStop,
	}
}

// publishAs publishes one stream event with identity headers.
func publishAs(t *testing.T, r *streamRig, rid string, seq int, data string, hdr map[string]string) {
	t.Helper()
	// A tenant's producer publishes on its tenant's own subject.
	m := &nats.Msg{Subject: wire.InStreamFor(hdr[streams.HeaderTenant], rid), Data: []byte(data), Header: nats.Header{}}
	m.Header.Set(streams.HeaderProvider, provider.Anthropic)
	m.Header.Set(streams.HeaderSeq, fmt.Sprint(seq))
	for k, v := range hdr {
		m.Header.Set(k, v)
	}
	if _, err := r.js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

func waitDeadLetters(t *testing.T, r *streamRig, code string, n int) []*nats.Msg {
	t.Helper()
	var got []*nats.Msg
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		got = r.deadLetterMsgs(t, streams.DLQ(streams.Accumulate, code))
		if len(got) != n {
			return fmt.Errorf("%d %s dead letters, want %d", len(got), code, n)
		}
		return nil
	})
	return got
}

// TestStream_a_different_payload_for_a_stored_seq_ends_stream_conflict:
// "first stored wins" used to assemble the stream from whichever copy of a
// seq came first and drop the other, so an injected event decided the
// call's arguments. Now the response ends stream_conflict, dead-lettered
// with both copies' hashes, and nothing reaches parse.
func TestStream_a_different_payload_for_a_stored_seq_ends_stream_conflict(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	runAccumulate(t, r.js, gate(r.js, time.Hour), nil)
	rid := "seq-twice"
	evs := weatherStream("Oslo")
	for i, ev := range evs {
		if i == 2 {
			publishAs(t, r, rid, 3, strings.Replace(ev, "Oslo", "Evil", 1), nil) // the injected copy, stored first
		}
		publishAs(t, r, rid, i+1, ev, nil)
	}
	res := oneResult(t, r, rid)
	if res.Status != call.StreamConflict || len(res.Errors) == 0 || !strings.Contains(res.Errors[0], "Toolgate-Seq 3 was stored twice with different payloads") {
		t.Fatalf("result %+v, want stream_conflict naming seq 3", res)
	}
	waitDeadLetters(t, r, CodeStreamConflict, 1)
	r.settled(t)
	if got := r.parsedFor(rid); len(got) != 0 {
		t.Fatalf("%d envelopes reached parse, want none", len(got))
	}
}

// TestStream_an_identical_duplicate_is_harmless: a producer's retry of a
// stored event changes nothing.
func TestStream_an_identical_duplicate_is_harmless(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	runAccumulate(t, r.js, gate(r.js, time.Hour), nil)
	rid := "retried"
	for i, ev := range weatherStream("Oslo") {
		publishAs(t, r, rid, i+1, ev, nil)
		if i == 2 {
			publishAs(t, r, rid, i+1, ev, nil)
		}
	}
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := len(r.parsedFor(rid)); n != 1 {
			return fmt.Errorf("%d envelopes at parse, want 1", n)
		}
		return nil
	})
	if e := r.parsedFor(rid)[0]; e.Request.Identity != call.IdentityUnverified {
		t.Fatalf("identity %q, want unverified (dev mode)", e.Request.Identity)
	}
}

// TestStream_an_event_of_another_sender_ends_stream_conflict: in dev mode an
// event with other Toolgate-Principal/Roles headers than the
// stream's first used to be assembled in; now it ends the stream.
func TestStream_an_event_of_another_sender_ends_stream_conflict(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	runAccumulate(t, r.js, gate(r.js, time.Hour), nil)
	rid := "two-senders"
	victim := map[string]string{streams.HeaderPrincipal: "alice"}
	attacker := map[string]string{streams.HeaderPrincipal: "mallory", streams.HeaderRoles: "admin"}
	for i, ev := range weatherStream("Oslo") {
		who := victim
		if i >= 2 {
			who = attacker
		}
		publishAs(t, r, rid, i+1, ev, who)
	}
	res := oneResult(t, r, rid)
	if res.Status != call.StreamConflict || !strings.Contains(res.Errors[0], "principal mallory") {
		t.Fatalf("result %+v, want stream_conflict naming the other sender", res)
	}
	waitDeadLetters(t, r, CodeStreamConflict, 1)
	if got := r.parsedFor(rid); len(got) != 0 {
		t.Fatalf("%d envelopes reached parse, want none", len(got))
	}
}

const weatherBody = `{"id":"c1","model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[{"id":"t1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"%s\"}"}}]}}]}`

func publishWhole(t *testing.T, r *streamRig, rid, body string, hdr map[string]string) {
	t.Helper()
	m := &nats.Msg{Subject: wire.SubjectInResponse, Data: []byte(body), Header: nats.Header{}}
	m.Header.Set(streams.HeaderProvider, provider.OpenAIChat)
	m.Header.Set(streams.HeaderResponseID, rid)
	for k, v := range hdr {
		m.Header.Set(k, v)
	}
	if _, err := r.js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

// TestResponse_id_reused_with_other_content_is_refused: a response id sent
// again with other arguments (past the duplicate window: here no
// Nats-Msg-Id at all) used to become a second set of calls under the same
// call ids; now it ends response_id_conflict and nothing of it reaches
// parse. The same content again is a redelivery, processed as before.
func TestResponse_id_reused_with_other_content_is_refused(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	runAccumulate(t, r.js, gate(r.js, time.Hour), nil)
	rid := "reused"
	publishWhole(t, r, rid, fmt.Sprintf(weatherBody, "Oslo"), nil)
	publishWhole(t, r, rid, fmt.Sprintf(weatherBody, "Oslo"), nil)
	publishWhole(t, r, rid, fmt.Sprintf(weatherBody, "Evil"), nil)
	waitDeadLetters(t, r, CodeResponseIDConflict, 1)
	r.settled(t)
	for _, e := range r.parsedFor(rid) {
		if strings.Contains(string(e.RawArguments), "Evil") {
			t.Fatalf("the second content reached parse: %s", e.RawArguments)
		}
	}
	// The parse durable and the results' consumer deliver to the test on
	// their own: read until both are in (the counts are then checked as
	// they stay).
	conflicts := func() int {
		n := 0
		for _, res := range r.resultsFor(rid) {
			if res.Status == call.ResponseIDConflict {
				n++
			}
		}
		return n
	}
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n, c := len(r.parsedFor(rid)), conflicts(); n < 1 || c < 1 {
			return fmt.Errorf("%d envelopes at parse and %d response_id_conflict results so far", n, c)
		}
		return nil
	})
	if n := len(r.parsedFor(rid)); n != 1 { // the duplicate's envelope is de-duplicated by its message id
		t.Fatalf("%d envelopes at parse, want 1", n)
	}
	if conflicts() != 1 {
		t.Fatalf("results %+v, want one response_id_conflict", r.resultsFor(rid))
	}
}

// tokenIssuer signs test tokens with an EC key written as a PEM file.
type tokenIssuer struct {
	key  *ecdsa.PrivateKey
	file string
}

func newTokenIssuer(t *testing.T) *tokenIssuer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	path := filepath.Join(t.TempDir(), "issuer.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &tokenIssuer{key: k, file: path}
}

func (is *tokenIssuer) verifier(t *testing.T) *identity.Verifier {
	t.Helper()
	v, err := identity.New(context.Background(), identity.Config{Issuer: "https://issuer.test", Audience: "toolgate", KeysFile: is.file})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (is *tokenIssuer) token(t *testing.T, tenant, sub string, roles ...string) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"iss": "https://issuer.test", "aud": "toolgate", "sub": sub, "tenant": tenant, "roles": roles,
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
	}).SignedString(is.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAccumulate_identity_comes_only_from_the_token: with an issuer, the
// Toolgate-Tenant/Principal/Roles headers used to be taken as they came;
// now a message without a valid token is refused (identity_invalid, dead
// letter without the token), and with one the call carries the token's
// identity whatever the headers say.
func TestAccumulate_identity_comes_only_from_the_token(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	is := newTokenIssuer(t)
	a := gate(r.js, time.Hour)
	a.Identity = is.verifier(t)
	runAccumulate(t, r.js, a, nil)
	forged := map[string]string{streams.HeaderTenant: "globex", streams.HeaderPrincipal: "root", streams.HeaderRoles: "admin"}
	publishWhole(t, r, "no-token", fmt.Sprintf(weatherBody, "Oslo"), forged)
	bad := map[string]string{wire.HeaderToken: is.token(t, "globex", "root", "admin") + "x"}
	for k, v := range forged {
		bad[k] = v
	}
	publishWhole(t, r, "bad-token", fmt.Sprintf(weatherBody, "Oslo"), bad)
	good := map[string]string{wire.HeaderToken: is.token(t, "acme", "alice", "billing")}
	for k, v := range forged {
		good[k] = v
	}
	publishWhole(t, r, "good-token", fmt.Sprintf(weatherBody, "Oslo"), good)
	dls := waitDeadLetters(t, r, CodeIdentityInvalid, 2)
	for _, m := range dls {
		if tok := m.Header.Get(wire.HeaderToken); tok != "" && !strings.HasPrefix(tok, "redacted sha256:") {
			t.Fatalf("dead letter keeps the token: %q", tok)
		}
	}
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := len(r.parsedFor("good-token")); n != 1 {
			return fmt.Errorf("%d envelopes at parse, want 1", n)
		}
		return nil
	})
	r.settled(t)
	if n := len(r.parsedFor("no-token")) + len(r.parsedFor("bad-token")); n != 0 {
		t.Fatalf("%d envelopes without a valid token reached parse", n)
	}
	req := r.parsedFor("good-token")[0].Request
	if req.Tenant != "acme" || req.Principal != "alice" || strings.Join(req.Roles, ",") != "billing" || req.Identity != call.IdentityVerified {
		t.Fatalf("request %+v, want the token's identity, verified", req)
	}
	for _, rid := range []string{"no-token", "bad-token"} {
		testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error { // delivered to the test on its own
			if len(r.resultsFor(rid)) == 0 {
				return fmt.Errorf("%s: no result yet", rid)
			}
			return nil
		})
		res := r.resultsFor(rid)
		if len(res) != 1 || res[0].Status != call.Rejected || !strings.Contains(res[0].Errors[0], CodeIdentityInvalid) {
			t.Fatalf("%s: results %+v, want one rejected identity_invalid", rid, res)
		}
	}
}

// TestStream_events_under_another_token_end_stream_conflict: with an
// issuer, a stream's events must all carry tokens of one tenant and
// principal.
func TestStream_events_under_another_token_end_stream_conflict(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	is := newTokenIssuer(t)
	a := gate(r.js, time.Hour)
	a.Identity = is.verifier(t)
	runAccumulate(t, r.js, a, nil)
	rid := "two-tokens"
	victim := map[string]string{wire.HeaderToken: is.token(t, "acme", "alice")}
	attacker := map[string]string{wire.HeaderToken: is.token(t, "acme", "mallory"), streams.HeaderPrincipal: "alice"}
	for i, ev := range weatherStream("Oslo") {
		who := victim
		if i >= 2 {
			who = attacker
		}
		publishAs(t, r, rid, i+1, ev, who)
	}
	res := oneResult(t, r, rid)
	if res.Status != call.StreamConflict || !strings.Contains(res.Errors[0], "principal mallory (verified)") {
		t.Fatalf("result %+v, want stream_conflict naming the other principal", res)
	}
	r.settled(t)
	if got := r.parsedFor(rid); len(got) != 0 {
		t.Fatalf("%d envelopes reached parse, want none", len(got))
	}
}
