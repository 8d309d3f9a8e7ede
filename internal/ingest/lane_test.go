package ingest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// TestLane_tenant_comes_from_the_subject_in_dev_mode: without an issuer a
// whole response's tenant is its subject's (wire.InTenantResponse); a
// Toolgate-Tenant header naming another tenant there, one on the shared
// subject, and a subject token that names no tenant are refused
// tenant_not_granted, answered on the subject's tenant (or none), with
// nothing handed to parse.
func TestLane_tenant_comes_from_the_subject_in_dev_mode(t *testing.T) {
	r := newStreamRig(t, 30*time.Second)
	a := gate(r.js, time.Minute)
	msg := func(subject, rid, tenant string, seq uint64) worker.Msg {
		m := wholeMsg(rid, tenant, "Oslo", seq)
		m.Subject = subject
		if tenant == "" {
			m.Header.Del(streams.HeaderTenant)
		}
		return m
	}
	for _, test := range []struct {
		name, rid, subject, header string
		callID, refusedOn          string // the call made, or the results subject of the refusal
	}{
		{"its own subject", "r1", wire.InTenantResponse("evil"), "", "evil=r1-0", ""},
		{"its own subject, its own header", "r2", wire.InTenantResponse("evil"), "evil", "evil=r2-0", ""},
		{"another tenant's header on its own subject", "r3", wire.InTenantResponse("evil"), "victim", "", wire.Results("evil", "r3")},
		{"a tenant header on the shared subject", "r4", streams.SubjectInResponse, "victim", "", wire.Results("", "r4")},
		{"a digest token", "r5", wire.InTenantPrefix + "~0123456789abcdef0123456789abcdef.response", "", "", wire.Results("", "r5")},
		{"no tenant token", "r6", wire.InTenantPrefix + "_.response", "", "", wire.Results("", "r6")},
	} {
		rid := test.rid
		outs, err := a.Handle(context.Background(), msg(test.subject, rid, test.header, 1))
		if err != nil {
			t.Fatalf("%s: %v", test.name, err)
		}
		envs, _ := parseInputs(t, outs)
		if test.callID != "" {
			if len(envs) != 1 || envs[0].CallID != test.callID || envs[0].Request.Tenant != "evil" {
				t.Fatalf("%s: envelopes %+v, want call %s of tenant evil", test.name, envs, test.callID)
			}
			continue
		}
		var refused, dead bool
		for _, o := range outs {
			refused = refused || o.Subject == test.refusedOn
			dead = dead || o.Subject == streams.DLQ(streams.Accumulate, CodeTenantNotGranted)
		}
		if len(envs) != 0 || !refused || !dead {
			t.Fatalf("%s: outputs %+v, want a refusal on %s and a %s dead letter, nothing to parse", test.name, subjects(outs), test.refusedOn, CodeTenantNotGranted)
		}
	}
}

func subjects(outs []worker.Output) []string {
	var s []string
	for _, o := range outs {
		s = append(s, o.Subject)
	}
	return s
}

// TestLane_two_tenants_streams_under_one_id_are_two_streams: victim's
// stream completes and runs under victim's key while evil's, under the
// same response id on evil's subject, stops halfway and ends
// transport_incomplete by its own idle timer (which carries evil's tenant
// token): each has its own responses-bucket mark, neither touches the
// other. Before, both were one stream keyed by the bare id.
func TestLane_two_tenants_streams_under_one_id_are_two_streams(t *testing.T) {
	r := newStreamRig(t, 5*time.Second)
	runAccumulate(t, r.js, gate(r.js, 500*time.Millisecond), nil)
	const rid = "shared-id"
	evil, victim := map[string]string{streams.HeaderTenant: "evil"}, map[string]string{streams.HeaderTenant: "victim"}
	evs := weatherStream("Oslo")
	for i, ev := range evs[:len(evs)-2] {
		publishAs(t, r, rid, i+1, ev, evil)
	}
	for i, ev := range weatherStream("Bergen") {
		publishAs(t, r, rid, i+1, ev, victim)
	}
	r.finishedMark(t, "victim="+rid)
	r.finishedMark(t, "evil="+rid)
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := len(r.resultsFor(rid)); n != 1 {
			return fmt.Errorf("%d results, want evil's transport_incomplete", n)
		}
		return nil
	})
	r.settled(t)
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error { // the parse durable delivers to the test on its own
		if len(r.parsedFor(rid)) == 0 {
			return fmt.Errorf("nothing at parse yet")
		}
		return nil
	})
	got := r.parsedFor(rid)
	if len(got) != 1 || got[0].CallID != "victim="+rid+"-0" || !strings.Contains(string(got[0].RawArguments), "Bergen") {
		t.Fatalf("parse got %+v, want victim's call alone", got)
	}
	if res := r.resultsFor(rid)[0]; res.Status != call.TransportIncomplete || res.CallID != "evil="+rid+"-0" {
		t.Fatalf("result %+v, want evil's call evil=%s-0 transport_incomplete", res, rid)
	}
	kv, err := r.js.KeyValue(context.Background(), streams.BucketResponses)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(context.Background(), rid); err == nil {
		t.Fatalf("a mark under the bare id %s: the tenants' streams were keyed by it", rid)
	}
}
