package natsusers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// authz render with a mapped P writes the claimed subjects' mapping in the
// accounts file: a nats-server loaded from it stores a tenant's claimed
// response in the partition streams.ResponsePartition names, and its users
// may publish there. Mapped 1 writes none (deploy/'s committed file).
func TestRender_maps_the_claimed_subjects_to_the_deployments_partitions(t *testing.T) {
	if conf, err := (authz.Config{Tenants: []string{"acme"}, Partitions: 8, Mapped: 1}).Render(); err != nil || containsMapping(conf) {
		t.Fatalf("mapped 1: %v, a mapping in\n%s", err, conf)
	}
	c := authz.Config{Tenants: []string{"acme"}, Partitions: 8, Mapped: 3}
	conf, err := c.Render()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range c.Names() {
		t.Setenv(authz.PasswordVar(u), "pw-"+u)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(path, []byte("include ./accounts.conf\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "accounts.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := testenv.RunJetStream(t, func(o *server.Options) { o.Users, o.Accounts = loaded.Users, loaded.Accounts })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, ajs := connectAs(t, s, authz.Admin, nil)
	set := streams.DefaultSettings()
	set.Fair.Partitions = 3
	if err := streams.Ensure(ctx, ajs, set); err != nil {
		t.Fatal(err)
	}
	_, pjs := connectAs(t, s, authz.ProducerUser("acme"), nil)
	for _, rid := range []string{"r1", "r2", "r3", "r4", "r5", "r6"} {
		if err := producer.New(pjs).ForTenant("acme").PublishResponse(ctx, producer.Meta{Provider: "openai-chat", ResponseID: rid}, []byte(`{}`)); err != nil {
			t.Fatalf("publish %s: %v", rid, err)
		}
		k := streams.ResponsePartition("acme", rid, 3)
		st, err := ajs.Stream(ctx, streams.ResponsesStream(k))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.GetLastMsgForSubject(ctx, wire.ClaimedPartitionSubject(wire.InTenantClaimed("acme", rid), k)); err != nil {
			t.Fatalf("%s not in partition %d: %v", rid, k, err)
		}
	}
}

func containsMapping(conf string) bool { return strings.Contains(conf, "mappings {") }
