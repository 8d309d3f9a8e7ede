package tools

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/idem"
	"github.com/toolgate/toolgate/internal/limit"
	"github.com/toolgate/toolgate/streams"
)

const limitsFile = `
tools:
  - name: refund
    input_schema: {type: object}
    policy: {risk: write}
  - name: get_weather
    input_schema: {type: object}
    policy: {risk: read}
limits:
  - {name: refunds_per_customer, tools: [refund], key: 'tenant + ":" + args.customer_id', window: 1h, count: 5}
  - {name: calls_per_tenant, window: 1m, count: 100, on_exceed: wait, max_wait: 30s}
`

func TestLimits_ls_and_show_a_keys_usage(t *testing.T) {
	r := newToolsRig(t)
	r.mustRun("", "apply", "-f", r.file("tools.yaml", limitsFile))
	var out bytes.Buffer
	if err := runLimits(&out, []string{"ls", "--nats", r.url}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"calls_per_tenant", "100 calls", "wait up to 30s", "get_weather,refund", "refunds_per_customer", "5 calls", "1h", `tenant + ":" + args.customer_id`} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("limits ls lacks %q:\n%s", want, out.String())
		}
	}
	// one charge, as execute makes it, in the embedded store
	nc, err := nats.Connect(r.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(context.Background(), streams.BucketIdempotency)
	if err != nil {
		t.Fatal(err)
	}
	rec := idem.Record{Key: idem.Key("c-0", "refund", []byte(`{}`)), CallID: "c-0", Tool: "refund", Fingerprint: idem.Fingerprint("refund", []byte(`{}`)), Owner: "o",
		Charges: []limit.Charge{{Limit: "refunds_per_customer", Key: "acme:c-42", Weight: 1, Window: time.Hour, Max: 5}}}
	if _, ok, err := idem.NewKV(kv).Claim(context.Background(), rec, time.Hour); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	out.Reset()
	if err := runLimits(&out, []string{"show", "refunds_per_customer", "--key", "acme:c-42", "--nats", r.url}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"refunds_per_customer", "1h0m0s, sliding", `key "acme:c-42"`, "used 1 of 5", "the oldest charge leaves the window at"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("limits show lacks %q:\n%s", want, out.String())
		}
	}
	if err := runLimits(&out, []string{"show", "no_such", "--nats", r.url}); err == nil || !strings.Contains(err.Error(), "no registered tool has a limit") {
		t.Fatalf("unknown limit: %v", err)
	}
}
