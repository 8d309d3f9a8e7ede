package stage

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/execute"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// The finding: any local client requested toolgate.exec.<tool> directly and
// the tool ran, because nothing told toolgate's requests from anyone else's.
// Now the execute gate signs each request and the tool (pkg/toolserver,
// verifying by default) refuses what it did not sign, whatever the broker
// lets the sender publish.
func TestTrust_executor_refuses_requests_that_skipped_the_gates(t *testing.T) {
	p := startPipeline(t)
	attacker, err := nats.Connect(p.nc.ConnectedUrl())
	if err != nil {
		t.Fatal(err)
	}
	defer attacker.Close()
	// In the open mode the attacker can also watch the executor subjects:
	// it keeps a copy of the genuine request.
	seen := make(chan *nats.Msg, 4)
	sub, err := attacker.ChanSubscribe(streams.Exec("create_invoice"), seen)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := attacker.Flush(); err != nil {
		t.Fatal(err)
	}

	rid := "resp-trust-exec"
	p.publish(rid, "openai-chat", chat(rid, "create_invoice", validInvoice, "tool_calls"))
	if rs := p.waitResults(rid, 1); rs[0]["status"] != "executed" {
		t.Fatalf("result %v: want the gated call executed by the verifying tool", rs[0])
	}
	if n := p.executed.Load(); n != 1 {
		t.Fatalf("tool ran %d times, want 1", n)
	}
	var genuine *nats.Msg
	select {
	case genuine = <-seen:
	case <-time.After(10 * time.Second):
		t.Fatal("no copy of the execute gate's request")
	}
	if genuine.Header.Get(wire.HeaderSignature) == "" {
		t.Fatal("the execute gate's request carries no signature")
	}

	ask := func(name string, m *nats.Msg, reason string) {
		t.Helper()
		resp, err := attacker.RequestMsg(m, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var r wire.ExecReply
		_ = json.Unmarshal(resp.Data, &r)
		if r.OK || resp.Header.Get(wire.HeaderSignatureRefused) != reason {
			t.Fatalf("%s: reply %s (%s %q): want refused %s", name, resp.Data, wire.HeaderSignatureRefused, resp.Header.Get(wire.HeaderSignatureRefused), reason)
		}
	}
	forged := nats.NewMsg(streams.Exec("create_invoice"))
	forged.Data = []byte(`{"customer_id":"cus_attacker","currency":"USD","line_items":[{"sku":"PRO-SEAT","quantity":999,"price_cents":1}]}`)
	forged.Header.Set(wire.HeaderCallID, "forged-0")
	forged.Header.Set(wire.HeaderIdemKey, "forged-key")
	ask("unsigned direct request", forged, wire.RefusedUnsigned)

	other, err := execute.GenerateSigner() // a key the tool does not trust
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&execute.NATS{NC: attacker, Signer: other}).Execute(p.ctx, execute.Request{Tool: "create_invoice", CallID: "forged-1", IdempotencyKey: "k", Arguments: forged.Data})
	if err == nil {
		t.Fatal("a request signed with another key was run")
	}

	edited := nats.NewMsg(genuine.Subject)
	edited.Header = genuine.Header
	edited.Data = forged.Data // the genuine signature, other arguments
	ask("genuine signature with other arguments", edited, wire.RefusedInvalid)

	if n := p.executed.Load(); n != 1 {
		t.Fatalf("tool ran %d times, want 1: a request that skipped the gates reached the handler", n)
	}
}
