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

// `toolgate status` without an operand shows each executor group's
// concurrency in use, queue and circuit, read from its durable: an open
// group (paused by its breaker) says so and until when; a busy one shows
// its call in use.
func TestStatus_overview_shows_each_executor_group_and_its_circuit(t *testing.T) {
	t.Setenv("TOOLGATE_SECRETS", t.TempDir())
	t.Setenv("TOOLGATE_NATS_USER", "")
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	if err := streams.Ensure(ctx, js, set); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := RunStatus(&out, []string{"--nats", srv.ClientURL()}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "executor groups: none yet") {
		t.Errorf("no groups, got:\n%s", out.String())
	}

	erp := set.Config(streams.ExecuteGroupConsumer("erp", 4))
	for _, cfg := range []jetstream.ConsumerConfig{erp, set.Config(streams.ExecuteGroupConsumer("weather", 8))} {
		if _, err := js.CreateOrUpdateConsumer(ctx, streams.StreamExecute, cfg); err != nil {
			t.Fatal(err)
		}
	}
	for _, subj := range []string{"erp", "erp", "weather"} {
		if _, err := js.Publish(ctx, streams.ExecuteSubject(subj, streams.ExecuteLane), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	wc, err := js.Consumer(ctx, streams.StreamExecute, streams.ExecuteDurable("weather"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wc.Fetch(1, jetstream.FetchMaxWait(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	open := erp
	open.MaxAckPending = 1
	if _, err := js.UpdateConsumer(ctx, streams.StreamExecute, open); err != nil {
		t.Fatal(err)
	}
	if _, err := js.PauseConsumer(ctx, streams.StreamExecute, erp.Durable, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}

	// The server acknowledges a publish before it counts it pending for the
	// durables: read until erp's queue is in, then check all.
	_ = testenv.Poll(5*time.Second, 50*time.Millisecond, func() error {
		out.Reset()
		if err := RunStatus(&out, []string{"--nats", srv.ClientURL()}); err != nil {
			return err
		}
		if !regexp.MustCompile(`(?m)^\s*erp\s+\S+\s+2\s`).MatchString(out.String()) {
			return errors.New("erp's queue not counted yet")
		}
		return nil
	})
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "executor groups (2)") {
		t.Fatalf("overview:\n%s", out.String())
	}
	erpLine, weatherLine := strings.Fields(lines[2]), strings.Fields(lines[3])
	if erpLine[0] != "erp" || erpLine[1] != "0/4" || erpLine[2] != "2" || !strings.HasPrefix(erpLine[3], "OPEN") || !strings.Contains(lines[2], "a probe after") {
		t.Errorf("erp: %q, want 0/4 in use, queue 2, OPEN until …", lines[2])
	}
	if weatherLine[0] != "weather" || weatherLine[1] != "1/8" || weatherLine[2] != "0" || weatherLine[3] != "closed" {
		t.Errorf("weather: %q, want 1/8 in use, queue 0, closed", lines[3])
	}

	out.Reset()
	if err := RunStatus(&out, []string{"--nats", srv.ClientURL(), "--json"}); err != nil {
		t.Fatal(err)
	}
	var ov overview
	if err := json.Unmarshal(out.Bytes(), &ov); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(ov.ExecutorGroups) != 2 || ov.ExecutorGroups[0].Circuit != "open" || ov.ExecutorGroups[0].OpenUntil == nil || ov.ExecutorGroups[1].InUse != 1 {
		t.Errorf("json: %s", out.String())
	}
}
