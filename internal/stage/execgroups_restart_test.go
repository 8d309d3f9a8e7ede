package stage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/worker"
	"github.com/toolgate/toolgate/streams"
)

// A group whose worker stopped is started again at the next sync. A
// cluster run lost the stream leader while a group's worker looked up its
// durable ("context deadline exceeded"); the worker returned, nothing
// started it again, and every call of the group waited for good.
func TestGroups_a_stopped_worker_is_started_again(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	settings := streams.DefaultSettings()
	if err := streams.Ensure(ctx, js, settings); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := tool.Load("charge.yaml", []byte(chargeTool))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Apply(ctx, kv, "charge.yaml", defs, false); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(ctx, kv, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if _, ok := reg.Lookup("charge"); !ok {
			return fmt.Errorf("charge not loaded yet")
		}
		return nil
	})
	g := &groupSet{js: js, reg: reg, settings: settings, log: zerolog.New(zerolog.NewTestWriter(t)),
		base: worker.Config{Stage: streams.Execute, DeadLetter: func(worker.Msg, string, error) []worker.Output { return nil }},
		h:    func(context.Context, worker.Msg) ([]worker.Output, error) { return nil, nil }}
	grp, wt := "", want{}
	for name, w := range g.wants() {
		grp, wt = name, w
	}
	if grp == "" {
		t.Fatal("no executor group wanted")
	}
	// As the cluster run left it: the group's worker returned.
	gone := &groupRun{want: wt, cancel: func() {}, done: make(chan struct{})}
	close(gone.done)
	g.running = map[string]*groupRun{grp: gone}
	g.sync(ctx)
	g.mu.Lock()
	r := g.running[grp]
	g.mu.Unlock()
	if r == gone || r.stopped() {
		t.Fatalf("group %s's stopped worker was not started again", grp)
	}
	cancel()
	<-r.done
}
