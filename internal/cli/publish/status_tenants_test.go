package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// With a tenant list, `toolgate status` without an operand shows each
// listed tenant's lane: its backlog (and the batch part), its oldest
// waiting input and its share of what execute delivered; a tenant not
// listed has no row.
func TestStatus_overview_shows_each_listed_tenants_backlog_and_share(t *testing.T) {
	t.Setenv("TOOLGATE_SECRETS", t.TempDir())
	t.Setenv("TOOLGATE_NATS_USER", "")
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
	noisy, quiet := set.Fair.LaneIndex("noisy"), set.Fair.LaneIndex("quiet")
	pub := func(subject string, n int) {
		t.Helper()
		for range n {
			if _, err := js.Publish(ctx, subject, []byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
	}
	pub(streams.GateLane(streams.Policy, streams.LaneToken(noisy, true)), 4)
	pub(streams.InTenantResponse("stranger"), 2)
	// Execute delivered three of noisy's calls and one of quiet's.
	fetch := func(lane string, n int) {
		t.Helper()
		pub(streams.ExecuteSubject("erp", lane), n)
		c, err := js.Consumer(ctx, streams.StreamExecute, streams.ExecuteLaneDurable("erp", lane))
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.Fetch(n, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range b.Messages() {
			if err := m.Ack(); err != nil {
				t.Fatal(err)
			}
		}
	}
	fetch(streams.LaneToken(noisy, false), 3)
	fetch(streams.LaneToken(quiet, false), 1)

	// the server acknowledges a publish (and an ack) before it counts it
	// for the durables: read until the backlogs are in, then check all
	var out bytes.Buffer
	_ = testenv.Poll(5*time.Second, 50*time.Millisecond, func() error {
		out.Reset()
		if err := RunStatus(&out, []string{"--nats", srv.ClientURL()}); err != nil {
			return err
		}
		if !regexp.MustCompile(`(?m)^\s*noisy\s+\S+\s+4\s`).MatchString(out.String()) || !regexp.MustCompile(`(?m)^\s*quiet\s+\S+\s+0\s`).MatchString(out.String()) {
			return errors.New("backlogs not counted yet")
		}
		return nil
	})
	text := out.String()
	if !strings.Contains(text, "tenants (2 fairness lanes of the tenant list)") || strings.Contains(text, "stranger") {
		t.Fatalf("overview:\n%s", text)
	}
	var noisyRow, quietRow []string
	for _, line := range strings.Split(text, "\n") {
		switch f := strings.Fields(line); {
		case len(f) > 0 && f[0] == "noisy":
			noisyRow = f
		case len(f) > 0 && f[0] == "quiet":
			quietRow = f
		}
	}
	// TENANT LANE BACKLOG BATCH OLDEST DELIVERED SHARE
	if len(noisyRow) != 7 || noisyRow[2] != "4" || noisyRow[3] != "4" || noisyRow[4] == "-" || noisyRow[5] != "3" || noisyRow[6] != "75.0%" {
		t.Errorf("noisy: %q, want backlog 4, all batch, an oldest, 3 delivered, 75%%", noisyRow)
	}
	if len(quietRow) != 7 || quietRow[2] != "0" || quietRow[4] != "-" || quietRow[5] != "1" || quietRow[6] != "25.0%" {
		t.Errorf("quiet: %q, want no backlog, 1 delivered, 25%%", quietRow)
	}

	out.Reset()
	if err := RunStatus(&out, []string{"--nats", srv.ClientURL(), "--json"}); err != nil {
		t.Fatal(err)
	}
	var ov overview
	if err := json.Unmarshal(out.Bytes(), &ov); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(ov.Tenants) != 2 || ov.Tenants[0].Tenants[0] != "noisy" || ov.Tenants[0].Backlog != 4 || ov.Tenants[1].Share != 25 {
		t.Errorf("json: %s", out.String())
	}
}
