package authz_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// With P = 3 an executor group keeps its records in every partition's
// bucket of the executors' records, its own tools' keys only: the server
// refuses it another group's tool's keys in a partition bucket, and a
// partition bucket beyond P; a user without the grant (a stage) may not
// even look a partition bucket up.
func TestExecutorPartitions_each_group_writes_only_its_own_tools_keys(t *testing.T) {
	c := authz.Config{Groups: []authz.Group{{Name: "payments", Tools: []string{"create_invoice"}}, {Name: "weather", Tools: []string{"get_weather"}}}, Partitions: 3}
	s := runUsers(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := connect(t, s, authz.Admin)
	set := streams.DefaultSettings()
	set.Fair.Partitions = 4 // a bucket beyond the users' P = 3 too
	if err := streams.Ensure(ctx, admin, set); err != nil {
		t.Fatal(err)
	}
	key := strings.Repeat("ab", 32)
	js, denied := connectWatched(t, s, authz.ExecutorUser("payments"))
	for p := range 3 {
		kv, err := js.KeyValue(ctx, streams.ExecReplayBucket(p))
		if err != nil {
			t.Fatalf("payments binding partition %d: %v", p, err)
		}
		if _, err := kv.Create(ctx, "create_invoice."+key, []byte("{}")); err != nil {
			t.Fatalf("payments recording its own tool in partition %d: %v", p, err)
		}
		if _, err := kv.Get(ctx, "create_invoice."+key); err != nil {
			t.Fatalf("payments reading its own record in partition %d: %v", p, err)
		}
	}
	two, err := js.KeyValue(ctx, streams.ExecReplayBucket(2))
	if err != nil {
		t.Fatal(err)
	}
	other := "$KV." + streams.ExecReplayBucket(2) + ".get_weather." + key
	testenv.Refused(t, "payments writing weather's key in partition 2", func() error { return denied.Saw(other) },
		func(c context.Context) error { _, err := two.Create(c, "get_weather."+key, []byte("{}")); return err })
	beyond := "$JS.API.STREAM.INFO.KV_" + streams.ExecReplayBucket(3)
	testenv.Refused(t, "payments binding partition 3, beyond P", func() error { return denied.Saw(beyond) },
		func(c context.Context) error { _, err := js.KeyValue(c, streams.ExecReplayBucket(3)); return err })

	stage, stageDenied := connectWatched(t, s, streams.Parse)
	info := "$JS.API.STREAM.INFO.KV_" + streams.ExecReplayBucket(1)
	testenv.Refused(t, "parse binding the executors' partition 1", func() error { return stageDenied.Saw(info) },
		func(c context.Context) error { _, err := stage.KeyValue(c, streams.ExecReplayBucket(1)); return err })
}
