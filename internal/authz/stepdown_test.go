package authz

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/toolgate/toolgate/streams"
)

// Moving a stream's leader (`toolgate streams apply`, `streams leaders
// --spread`) is the admin's: no other rendered user — stage, producer,
// executor, console — may publish a leader step-down of any stream, nor
// any other JetStream cluster operation (a peer's removal, the meta
// leader's step-down), whatever the deployment's tenants, lanes and P.
func TestRender_only_the_admin_may_step_a_leader_down(t *testing.T) {
	c := Config{Groups: []Group{{Name: ExampleGroup, Tools: ExampleTools()}}, Tenants: []string{"acme"}, Lanes: 2, Partitions: 3}
	conf, err := c.Render()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "accounts.conf")
	if err := os.WriteFile(path, []byte("listen: 127.0.0.1:-1\n"+conf), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, u := range c.Names() {
		t.Setenv(PasswordVar(u), "x")
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	subjects := []string{"$JS.API.META.LEADER.STEPDOWN", "$JS.API.STREAM.PEER.REMOVE." + streams.StreamGates}
	for _, name := range []string{streams.StreamGates, streams.StreamIn, streams.StreamResults, streams.PartitionStream(streams.Execute, 0), streams.PartitionStream(streams.Parse, 2), "KV_" + streams.BucketCalls} {
		subjects = append(subjects, "$JS.API.STREAM.LEADER.STEPDOWN."+name, "$JS.API.CONSUMER.LEADER.STEPDOWN."+name+".x")
	}
	seen := 0
	for _, u := range opts.Users {
		if u.Username == Admin {
			if u.Permissions != nil {
				t.Errorf("the admin is restricted: %+v", u.Permissions)
			}
			continue
		}
		seen++
		if u.Permissions == nil || u.Permissions.Publish == nil || len(u.Permissions.Publish.Allow) == 0 {
			t.Errorf("user %s may publish anything", u.Username)
			continue
		}
		for _, s := range subjects {
			for _, allow := range u.Permissions.Publish.Allow {
				if server.SubjectMatchesFilter(s, allow) {
					t.Errorf("user %s may publish %s (granted %q)", u.Username, s, allow)
				}
			}
		}
	}
	if seen != len(c.Names())-1 {
		t.Errorf("checked %d users, want every user but the admin: %v", seen, c.Names())
	}
}
