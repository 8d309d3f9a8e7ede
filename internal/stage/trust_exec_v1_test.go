package stage

import (
	"flag"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/execute/exectest"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// An execute stage configured by default (no flag, no env) signs its
// executor requests with a v2 alone — no v1, which never expires for an
// executor that reads it — and pkg/toolserver runs them; with
// --exec-signature-v1=true (TOOLGATE_EXEC_SIGNATURE_V1) the request also
// carries a v1 that an executor written before the expiry verifies.
func TestTrust_execute_signs_v2_alone_by_default(t *testing.T) {
	for _, c := range []struct {
		env    string
		withV1 bool
	}{{"", false}, {"true", true}} {
		fs := flag.NewFlagSet("execute", flag.ContinueOnError)
		build := ExecFlags(fs, func(k string) string {
			if k == "TOOLGATE_EXEC_SIGNATURE_V1" {
				return c.env
			}
			return ""
		})
		if err := fs.Parse(nil); err != nil {
			t.Fatal(err)
		}
		exec, err := build()
		if err != nil {
			t.Fatal(err)
		}
		exec.Signer = testExecSigner() // no key file: the key serveTools' toolserver verifies with
		p := startRig(t, rig{configure: func(cfg *Config) { cfg.Exec = exec }})
		seen := make(chan *nats.Msg, 4)
		sub, err := p.nc.ChanSubscribe(streams.Exec("create_invoice"), seen)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.nc.Flush(); err != nil {
			t.Fatal(err)
		}
		rid := "resp-sig-v1-" + strconv.FormatBool(c.withV1)
		p.publish(rid, "openai-chat", chat(rid, "create_invoice", validInvoice, "tool_calls"))
		if rs := p.waitResults(rid, 1); rs[0]["status"] != "executed" {
			t.Fatalf("env %q: result %v, want executed by pkg/toolserver", c.env, rs[0])
		}
		var m *nats.Msg
		select {
		case m = <-seen:
		case <-time.After(10 * time.Second):
			t.Fatal("no copy of the execute gate's request")
		}
		_ = sub.Unsubscribe()
		h := m.Header.Get(wire.HeaderSignature)
		if !strings.Contains(h, ",e=") || !strings.Contains(h, ",v2=") || strings.Contains(h, "v1=") != c.withV1 {
			t.Fatalf("env %q: Toolgate-Signature %q, want a v2 with its expiry and a v1 %v", c.env, h, c.withV1)
		}
		r := wire.ExecRequest{CallID: m.Header.Get(wire.HeaderCallID), IdempotencyKey: m.Header.Get(wire.HeaderIdemKey), Tool: "create_invoice", Body: m.Data}
		if got := exectest.V1Accepts(t, h, r, testExecSigner().Public()[0]); got != c.withV1 {
			t.Fatalf("env %q: an executor that reads only v1 accepts it: %v, want %v", c.env, got, c.withV1)
		}
	}
}
