package authz

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// TestRole_tenant_producer_publishes_only_its_tenants_subjects: a tenant's
// producer may publish on its tenant's own ingest subjects (where
// accumulate takes the tenant from the subject) and its own asserting
// subject, and on nothing shared: on toolgate.in.response it could name
// any tenant, or squat the tenant-less producer's ids. The tenant-less
// producer keeps the shared subjects and no tenant's.
func TestRole_tenant_producer_publishes_only_its_tenants_subjects(t *testing.T) {
	c := Config{Tenants: []string{"evil", "victim"}}
	p, err := c.Role(ProducerUser("evil"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{wire.InTenantResponse("evil"), wire.InTenantBatch("evil"), wire.InTenantStream("evil", "*"),
		wire.InTenantClaimed("evil", "*"), wire.ClaimedLast(wire.InTenantClaimed("evil", "*")),
		// its claimed subjects as the server maps them to a partition, and
		// read back there (streams/claimed_partitions.go)
		wire.InTenantClaimed("evil", "*") + ".*", wire.ClaimedLastAnywhere(wire.InTenantClaimed("evil", "*")),
		// its batch responses and stream events as the server maps them
		// to TOOLGATE_IN's partitions (streams/in_partitions.go)
		wire.InTenantBatch("evil") + ".*", wire.InTenantStream("evil", "*") + ".*",
		wire.InAsResponse(ProducerUser("evil"))}
	if !slices.Equal(p.Publish, want) {
		t.Fatalf("producer-evil publishes %v, want %v", p.Publish, want)
	}
	tl, err := c.Role(Producer)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tl.Publish {
		if s == wire.InTenantResponse("evil") || s == wire.InTenantBatch("evil") || s == wire.InTenantStream("victim", "*") || s == wire.InTenantPrefix+">" {
			t.Fatalf("the tenant-less producer may publish on %s", s)
		}
	}
	if !slices.Contains(tl.Publish, streams.SubjectInResponse) {
		t.Fatalf("the tenant-less producer publishes %v, want the shared subject", tl.Publish)
	}
}
