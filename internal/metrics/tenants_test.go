package metrics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// Each listed tenant's lane, read from the applied durables of a real
// server: its backlog at accumulate, at a gate stage and at its executor
// group, the batch part, the oldest waiting input and the calls delivered to
// execute; a tenant not listed has no lane of its own to show.
func TestTenantLanes_read_backlog_oldest_and_delivered_per_listed_tenant(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	set.Fair = streams.Fair{Tenants: []string{"noisy", "quiet"}}
	if err := streams.Ensure(ctx, js, set); err != nil {
		t.Fatal(err)
	}
	for _, c := range set.ExecuteGroupConsumers("erp", 4) {
		if _, err := js.CreateOrUpdateConsumer(ctx, streams.StreamExecute, set.Config(c)); err != nil {
			t.Fatal(err)
		}
	}
	before := time.Now()
	pub := func(subject string, n int) {
		t.Helper()
		for range n {
			if _, err := js.Publish(ctx, subject, []byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
	}
	noisy, quiet := set.Fair.LaneIndex("noisy"), set.Fair.LaneIndex("quiet")
	pub(streams.InTenantResponse("noisy"), 1)  // accumulate, noisy's lane
	for _, rid := range []string{"r1", "r2"} { // accumulate, noisy's lane: claimed whole responses (TOOLGATE_RESPONSES)
		pub(streams.InTenantClaimed("noisy", rid), 1)
	}
	pub(streams.InTenantBatch("noisy"), 4)       // accumulate, noisy's batch lane
	pub(streams.InTenantResponse("stranger"), 5) // not listed: the main durable's
	pub(streams.GateLane(streams.Validate, streams.LaneToken(noisy, true)), 2)
	pub(streams.ExecuteSubject("erp", streams.LaneToken(quiet, false)), 1)
	// quiet's call delivered to execute and not yet acknowledged.
	lc, err := js.Consumer(ctx, streams.StreamExecute, streams.ExecuteLaneDurable("erp", streams.LaneToken(quiet, false)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lc.Fetch(1, jetstream.FetchMaxWait(5*time.Second)); err != nil {
		t.Fatal(err)
	}

	read := JetStreamTenantLanes(js, nil)
	// The server acknowledges a publish before it counts it pending for the
	// durables: read until the backlogs are in, then check all.
	var ls []TenantLane
	testenv.Eventually(t, 10*time.Second, 20*time.Millisecond, func() error {
		var err error
		if ls, err = read(ctx); err != nil {
			return err
		}
		if len(ls) != 2 || ls[0].Backlog < 9 || ls[0].Batch < 6 || ls[1].Backlog < 1 {
			return fmt.Errorf("lanes %+v: backlogs not counted yet", ls)
		}
		return nil
	})
	if len(ls) != 2 || ls[0].Lane != noisy || ls[1].Lane != quiet {
		t.Fatalf("lanes: %+v, want noisy's %d and quiet's %d", ls, noisy, quiet)
	}
	if l := ls[0]; strings.Join(l.Tenants, ",") != "noisy" || l.Backlog != 9 || l.Batch != 6 || l.Delivered != 0 || l.Oldest.Before(before.Add(-time.Second)) {
		t.Errorf("noisy: %+v, want backlog 9 (3 at accumulate, 2 of them claimed whole responses, 4 batch at accumulate, 2 batch at validate), none delivered to execute, oldest since the test began", l)
	}
	if l := ls[1]; strings.Join(l.Tenants, ",") != "quiet" || l.Backlog != 1 || l.Batch != 0 || l.Delivered != 1 || l.Oldest.IsZero() {
		t.Errorf("quiet: %+v, want backlog 1 (in flight at execute), 1 delivered to execute, an oldest", l)
	}

	m := New()
	defer m.WatchTenantLanes(read)()
	out := scrape(t, m)
	for _, want := range []string{
		`toolgate_tenant_backlog{priority="batch",tenant="noisy"} 6`,
		`toolgate_tenant_backlog{priority="interactive",tenant="noisy"} 3`,
		`toolgate_tenant_backlog{priority="interactive",tenant="quiet"} 1`,
		`toolgate_tenant_oldest_pending_seconds{tenant="quiet"}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(out, "stranger") {
		t.Error("a tenant not listed has a series of its own")
	}
}

// Without a tenant list there are no lanes to read, and no series.
func TestTenantLanes_none_without_a_tenant_list(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, streams.InTenantResponse("noisy"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	read := JetStreamTenantLanes(js, nil)
	ls, err := read(ctx)
	if err != nil || len(ls) != 0 {
		t.Fatalf("lanes %+v, %v; want none", ls, err)
	}
	m := New()
	defer m.WatchTenantLanes(read)()
	if out := scrape(t, m); strings.Contains(out, "toolgate_tenant_backlog{") {
		t.Errorf("a tenant series without a tenant list:\n%s", out)
	}
}
