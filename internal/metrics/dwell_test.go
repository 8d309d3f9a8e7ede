package metrics

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/streams"
)

// Dwell is labelled by tenant only for the listed tenants: any other
// tenant's calls, and every call where no list is configured, share the
// empty label, so a hostile tenant name cannot grow the series.
func TestDwell_labels_only_listed_tenants(t *testing.T) {
	m := New()
	at := time.Now().Add(-2 * time.Second)
	for _, tenant := range []string{"acme", "evil-1", "evil-2"} {
		e := call.Envelope{CreatedAt: at, Request: call.Request{Tenant: tenant}}
		m.observeDwell(streams.Execute, e, time.Now())
	}
	m.DwellTenants([]string{"acme"})
	m.observeDwell(streams.Execute, call.Envelope{CreatedAt: at, Request: call.Request{Tenant: "acme"}}, time.Now())
	m.observeDwell(streams.Parse, call.Envelope{CreatedAt: at, Request: call.Request{Tenant: "acme"}}, time.Now())
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	for _, f := range fams {
		if f.GetName() != "toolgate_call_dwell_seconds" {
			continue
		}
		for _, s := range f.GetMetric() {
			counts[s.GetLabel()[0].GetValue()] = s.GetHistogram().GetSampleCount()
		}
	}
	if len(counts) != 2 || counts["acme"] != 1 || counts[""] != 3 {
		t.Fatalf("dwell series by tenant: %v, want acme 1 and the unlabelled 3", counts)
	}
}
