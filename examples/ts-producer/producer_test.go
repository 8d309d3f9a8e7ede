// Package tsproducer tests the TypeScript producer example: it runs `npm
// ci`, compiles src/producer.ts with tsc and runs it with node against the
// real pipeline. node and npm are required (apt-get install nodejs npm); a
// machine without them fails the test, it does not skip.
package tsproducer

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/httpingest/pipetest"
	"github.com/toolgate/toolgate/pkg/toolserver"
)

// need finds a program or fails saying how to install it.
func need(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found (%v): the TypeScript producer test needs Node.js and npm: apt-get install -y nodejs npm", name, err)
	}
	return path
}

func sh(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

func TestTSProducer_publishes_and_reads_its_outcome(t *testing.T) {
	node, npm := need(t, "node"), need(t, "npm")
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	// The lock file pins nats and typescript; the npm cache serves them
	// offline once fetched.
	sh(t, dir, nil, npm, "ci", "--prefer-offline", "--no-audit", "--no-fund")
	sh(t, dir, nil, npm, "exec", "--", "tsc", "-p", ".")

	p := pipetest.Start(t, pipetest.Options{Tenants: []string{"acme"}})
	p.Serve(t, func(tool string, c toolserver.Call) (any, error) {
		return map[string]any{"invoice_id": "inv_ts_1", "tool": tool}, nil
	})
	// The tenant-less producer, and a tenant's on its tenant's own
	// subject (the only ingest subject producer-acme may publish on).
	for _, test := range []struct{ user, tenant, rid, callID string }{
		{authz.Producer, "", "ts-invoice-1", "ts-invoice-1-0"},
		{authz.ProducerUser("acme"), "acme", "ts-invoice-2", "acme=ts-invoice-2-0"},
	} {
		out := sh(t, dir, []string{"NATS_URL=" + p.URL, "NATS_USER=" + test.user, "NATS_PASSWORD=" + p.Passwords[test.user],
			"TOOLGATE_TENANT=" + test.tenant, "TOOLGATE_RESPONSE_ID=" + test.rid, "TOOLGATE_CALLS=1", "TOOLGATE_WAIT_MS=60000"},
			node, filepath.Join("dist", "producer.js"), filepath.Join(pipetest.Root(), "examples", "responses", "valid-invoice.json"))
		var got struct {
			CallID string          `json:"call_id"`
			Tool   string          `json:"tool"`
			Status string          `json:"status"`
			Result json.RawMessage `json:"result"`
		}
		line := strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("%s: last line %q: %v\n%s", test.user, line, err, out)
		}
		if got.CallID != test.callID || got.Tool != "create_invoice" || got.Status != "executed" || !strings.Contains(string(got.Result), "inv_ts_1") {
			t.Fatalf("%s: outcome %+v, want call %s executed\n%s", test.user, got, test.callID, out)
		}
	}
}
