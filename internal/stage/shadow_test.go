package stage

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/shadow"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/whatif"
	"github.com/toolgate/toolgate/streams"
)

// shadowTools tightens get_weather's policy (ops only) and opens
// delete_customer_account to anyone without approval.
const shadowTools = `
tools:
  - name: get_weather
    input_schema:
      type: object
      properties: {city: {type: string, minLength: 1}}
      required: [city]
    policy: {risk: read, allow: "'ops' in roles"}
  - name: delete_customer_account
    input_schema:
      type: object
      properties: {customer_id: {type: string}, reason: {type: string}}
    policy: {risk: read, allow: "true"}
`

// startShadowRig runs the pipeline with a short flush interval; before
// (may be nil) runs before the stages start.
func startShadowRig(t *testing.T, before func(*pipe)) *pipe {
	t.Helper()
	return startRig(t, rig{
		serve:     []string{"create_invoice", "get_weather", "delete_customer_account"},
		configure: func(c *Config) { c.ShadowFlush = 50 * time.Millisecond },
		before:    before,
	})
}

// countExec counts every message on an executor subject.
func countExec(t *testing.T, nc *nats.Conn) *atomic.Int32 {
	t.Helper()
	var n atomic.Int32
	sub, err := nc.Subscribe(streams.Exec(">"), func(*nats.Msg) { n.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	return &n
}

func (p *pipe) applyShadow(yaml string) shadow.Revision {
	p.t.Helper()
	defs, err := tool.Load("shadow.yaml", []byte(yaml))
	if err != nil {
		p.t.Fatal(err)
	}
	rev, err := shadow.Apply(p.ctx, p.kv(streams.BucketTools), p.kv(streams.BucketToolsShadow), p.kv(streams.BucketShadowReport),
		"shadow.yaml", defs, time.Now(), 1<<20)
	if err != nil {
		p.t.Fatal(err)
	}
	return rev
}

func (p *pipe) kv(bucket string) jetstream.KeyValue {
	p.t.Helper()
	kv, err := p.js.KeyValue(p.ctx, bucket)
	if err != nil {
		p.t.Fatal(err)
	}
	return kv
}

// msgs is how many messages a bucket's stream holds.
func (p *pipe) msgs(bucket string) uint64 {
	p.t.Helper()
	s, err := p.js.Stream(p.ctx, "KV_"+bucket)
	if err != nil {
		p.t.Fatal(err)
	}
	return s.CachedInfo().State.Msgs
}

func TestShadow_counts_a_changed_verdict_while_the_live_call_executes_once(t *testing.T) {
	// Applied before the stages start: the policy stage loads it before it
	// takes a call.
	var rev shadow.Revision
	p := startShadowRig(t, func(p *pipe) { rev = p.applyShadow(shadowTools) })
	execs := countExec(t, p.nc)
	reports := p.kv(streams.BucketShadowReport)
	p.publishAs("sh-w", "get_weather", `{"city":"Lisbon-7731"}`, "alice", "viewer")
	p.publishAs("sh-d", "delete_customer_account", `{"customer_id":"cus_9","reason":"asked"}`, "alice", "viewer")
	if r := p.waitResults("sh-w", 1)[0]; r["status"] != "executed" {
		t.Fatalf("get_weather ended %v, want executed (the shadow must not change it)", r["status"])
	}
	if r := p.waitResults("sh-d", 1)[0]; r["status"] != string(call.PolicyRejected) {
		t.Fatalf("delete_customer_account ended %v, want policy_rejected (the shadow must not change it)", r["status"])
	}
	var rep *whatif.Report
	testenv.Eventually(t, 10*time.Second, 50*time.Millisecond, func() error {
		var err error
		if rep, err = shadow.Read(p.ctx, reports, rev.ID); err != nil {
			return err
		}
		if len(rep.Tools) != 2 {
			return fmt.Errorf("report has %d tools", len(rep.Tools))
		}
		return nil
	})
	w, d := rep.Tools["get_weather"], rep.Tools["delete_customer_account"]
	if w.Seen != 1 || len(w.Changes) != 1 || w.Changes[0].Would != "would be rejected: policy_rejected" || !w.Changes[0].Refused ||
		w.Changes[0].Examples[0] != "sh-w-0" || !strings.Contains(w.Changes[0].Why, "'ops' in roles") {
		t.Fatalf("get_weather: %+v %+v", w, w.Changes)
	}
	if d.Seen != 1 || len(d.Changes) != 1 || d.Changes[0].Was != "rejected: policy_rejected" || d.Changes[0].Would != "would pass" {
		t.Fatalf("delete_customer_account: %+v %+v", d, d.Changes)
	}
	if rep.Refused() != 1 {
		t.Fatalf("refused %d, want 1", rep.Refused())
	}
	p.settled(streams.Execute)
	// Only the live verdict acted: one request to one executor subject;
	// the call only the shadow would pass reached none. countExec's
	// subscription delivers on its own: read until the request is in.
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if execs.Load() == 0 {
			return fmt.Errorf("no message on an executor subject counted yet")
		}
		return nil
	})
	if n, m := p.executed.Load(), execs.Load(); n != 1 || m != 1 {
		t.Fatalf("executed %d, %d messages on executor subjects; want 1 and 1", n, m)
	}
	// The report holds no argument.
	for _, k := range []string{"get_weather", "delete_customer_account"} {
		e, err := reports.Get(p.ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(e.Value()); strings.Contains(s, "Lisbon-7731") || strings.Contains(s, "cus_9") {
			t.Fatalf("report record %s quotes arguments: %s", k, s)
		}
	}
}

func TestShadow_none_applied_costs_no_write(t *testing.T) {
	p := startShadowRig(t, nil)
	for i := range 3 {
		p.publishAs(fmt.Sprintf("nosh-%d", i), "get_weather", `{"city":"Oslo"}`, "alice", "viewer")
	}
	for i := range 3 {
		p.waitResults(fmt.Sprintf("nosh-%d", i), 1)
	}
	p.settled(streams.Policy)
	// With no shadow nothing is counted (shadow's own tests: Observe holds
	// nothing to flush), so nothing is ever written.
	for _, b := range []string{streams.BucketShadowReport, streams.BucketToolsShadow} {
		if n := p.msgs(b); n != 0 {
			t.Fatalf("bucket %s holds %d messages with no shadow applied", b, n)
		}
	}
	// The same count sees a shadow's writes: one record for the one tool.
	// (The watch arms it a moment after: a call may pass before it does.)
	p.applyShadow(shadowTools)
	tries := 0
	testenv.Eventually(t, 10*time.Second, 100*time.Millisecond, func() error {
		tries++
		p.publishAs(fmt.Sprintf("nosh-after-%d", tries), "get_weather", `{"city":"Oslo"}`, "alice", "ops")
		if n := p.msgs(streams.BucketShadowReport); n == 0 {
			return fmt.Errorf("report bucket holds %d messages", n)
		}
		return nil
	})
}

// looserTools lets get_weather take other properties and drops
// create_invoice's "total must be greater than zero" rule: calls the live
// validate and business gates refuse, which never reach policy.
const looserTools = `
tools:
  - name: get_weather
    input_schema:
      type: object
      properties: {city: {type: string, minLength: 1}}
      required: [city]
    policy: {risk: read}
  - name: create_invoice
    input_schema:
      type: object
      properties:
        customer_id: {type: string, minLength: 1}
        currency: {type: string, enum: [USD, EUR, GBP]}
        line_items: {type: array, minItems: 1, items: {type: object}}
      required: [customer_id, currency, line_items]
    policy: {risk: write}
`

// TestShadow_counts_calls_the_live_validate_and_business_gates_refused: a
// shadow with a looser schema and one rule fewer reports the calls the live
// definitions stopped before policy as "would pass", once each, while they
// end as the live definitions say.
func TestShadow_counts_calls_the_live_validate_and_business_gates_refused(t *testing.T) {
	var rev shadow.Revision
	p := startShadowRig(t, func(p *pipe) { rev = p.applyShadow(looserTools) })
	reports := p.kv(streams.BucketShadowReport)
	p.publishAs("lo-w", "get_weather", `{"city":"Oslo","country":"NO-4471"}`, "alice", "viewer")
	p.publishAs("lo-i", "create_invoice", `{"customer_id":"cus_1","currency":"EUR","line_items":[{"sku":"a","quantity":1,"price_cents":0}]}`, "alice", "viewer")
	if r := p.waitResults("lo-i", 1)[0]; r["status"] != string(call.BusinessInvalid) {
		t.Fatalf("create_invoice ended %v, want business_invalid (the shadow must not change it)", r["status"])
	}
	if r := p.waitResults("lo-w", 1)[0]; r["status"] == "executed" {
		t.Fatalf("get_weather ended %v: the live schema refuses it", r["status"])
	}
	var rep *whatif.Report
	testenv.Eventually(t, 10*time.Second, 50*time.Millisecond, func() error {
		var err error
		if rep, err = shadow.Read(p.ctx, reports, rev.ID); err != nil {
			return err
		}
		if len(rep.Tools) != 2 {
			return fmt.Errorf("report has %d tools", len(rep.Tools))
		}
		return nil
	})
	p.settled(streams.Execute)
	if rep, _ = shadow.Read(p.ctx, reports, rev.ID); rep == nil {
		t.Fatal("report gone")
	}
	w, i := rep.Tools["get_weather"], rep.Tools["create_invoice"]
	if w.Seen != 1 || len(w.Changes) != 1 || w.Changes[0].Was != "rejected: schema_invalid" || w.Changes[0].Would != "would pass" || w.Changes[0].Examples[0] != "lo-w-0" {
		t.Fatalf("get_weather: %+v %+v", w, w.Changes)
	}
	if i.Seen != 1 || len(i.Changes) != 1 || i.Changes[0].Was != "rejected: business_invalid" || i.Changes[0].Would != "would pass" {
		t.Fatalf("create_invoice: %+v %+v", i, i.Changes)
	}
	for _, k := range []string{"get_weather", "create_invoice"} {
		e, err := reports.Get(p.ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(e.Value()); strings.Contains(s, "NO-4471") || strings.Contains(s, "cus_1") {
			t.Fatalf("report record %s quotes arguments: %s", k, s)
		}
	}
}
