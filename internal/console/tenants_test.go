package console

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// With a tenant list, the overview, read by the least-privilege console
// user, shows each listed tenant's lane: its backlog, the batch part, how
// long its oldest call has waited at a gate and its share of execute; a
// tenant not listed has no row.
func TestOverview_shows_each_listed_tenants_backlog_and_share(t *testing.T) {
	r := newRigAs(t, nil, nil, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	set.Storage = jetstream.MemoryStorage
	set.Fair = streams.Fair{Tenants: []string{"noisy", "quiet"}}
	if err := streams.Ensure(ctx, r.js, set); err != nil {
		t.Fatal(err)
	}
	for _, c := range set.ExecuteGroupConsumers("erp", 4) {
		if _, err := r.js.CreateOrUpdateConsumer(ctx, streams.StreamExecute, set.Config(c)); err != nil {
			t.Fatal(err)
		}
	}
	noisy, quiet := set.Fair.LaneIndex("noisy"), set.Fair.LaneIndex("quiet")
	for range 5 {
		if _, err := r.js.Publish(ctx, streams.GateLane(streams.Validate, streams.LaneToken(noisy, true)), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.js.Publish(ctx, streams.InTenantResponse("stranger"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	lane := streams.LaneToken(quiet, false)
	if _, err := r.js.Publish(ctx, streams.ExecuteSubject("erp", lane), []byte("x")); err != nil {
		t.Fatal(err)
	}
	c, err := r.js.Consumer(ctx, streams.StreamExecute, streams.ExecuteLaneDurable("erp", lane))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fetch(1, jetstream.FetchMaxWait(5*time.Second)); err != nil {
		t.Fatal(err)
	}

	var code int
	var body string
	_ = testenv.Poll(5*time.Second, 50*time.Millisecond, func() error {
		code, body = r.get(Prefix)
		// the server acknowledges a publish before it counts it pending
		// for the lanes' durables: wait until the noisy lane's backlog is in
		if code == 200 && strings.Contains(body, `data-testid="tenants"`) && strings.Contains(body, `<td>noisy</td><td class="num">`+strconv.Itoa(noisy)+`</td><td class="num">5</td>`) {
			return nil
		}
		return errors.New("no tenants' backlog yet")
	})
	if code != 200 {
		t.Fatalf("overview: %d", code)
	}
	if strings.Contains(body, "fairness lanes: ") {
		t.Fatalf("the console user may not read the lanes:\n%s", body)
	}
	row := func(idx int) string {
		_, after, ok := strings.Cut(body, `<tr data-lane="`+string(rune('0'+idx))+`">`)
		if !ok {
			t.Fatalf("no row for lane %d:\n%s", idx, body)
		}
		tr, _, _ := strings.Cut(after, "</tr>")
		return tr
	}
	if tr := row(noisy); !strings.HasPrefix(tr, `<td>noisy</td>`) || !strings.Contains(tr, `<td class="num">5</td><td class="num">5</td>`) || strings.Contains(tr, "–") || !strings.Contains(tr, "0.0%") {
		t.Errorf("noisy: %s, want backlog 5, all batch, an oldest waiting, no share", tr)
	}
	if tr := row(quiet); !strings.HasPrefix(tr, `<td>quiet</td>`) || !strings.Contains(tr, `<td class="num">1</td><td class="num">0</td>`) || !strings.Contains(tr, "100.0%") {
		t.Errorf("quiet: %s, want backlog 1 (in flight), the whole share", tr)
	}
	if strings.Contains(body, "stranger") {
		t.Error("a tenant not listed has a row")
	}
}
