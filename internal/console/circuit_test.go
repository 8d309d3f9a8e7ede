package console

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// The overview, read by the least-privilege console user, shows each
// executor group and a banner for the one whose circuit is open (its
// durable paused by the breaker); a closed group gets none. Behind the
// login: a visitor without a session sees neither.
func TestOverview_a_banner_when_an_executor_groups_circuit_is_open(t *testing.T) {
	r := newRigAs(t, nil, nil, true)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	erp := set.Config(streams.ExecuteGroupConsumer("erp", 2))
	for _, c := range []string{"erp", "weather"} {
		cfg := set.Config(streams.ExecuteGroupConsumer(c, 8))
		if c == "erp" {
			cfg = erp
		}
		if _, err := r.js.CreateOrUpdateConsumer(ctx, streams.StreamExecute, cfg); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if _, err := r.js.Publish(ctx, streams.ExecuteSubject("erp", streams.ExecuteLane), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	open := erp
	open.MaxAckPending = 1
	if _, err := r.js.UpdateConsumer(ctx, streams.StreamExecute, open); err != nil {
		t.Fatal(err)
	}
	if _, err := r.js.PauseConsumer(ctx, streams.StreamExecute, erp.Durable, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}

	// The consumer's state reaches its info a moment after the calls
	// (make test, under load, once read it before the three were counted).
	var code int
	var body string
	_ = testenv.Poll(5*time.Second, 50*time.Millisecond, func() error {
		code, body = r.get(Prefix)
		if code == 200 && strings.Contains(body, "its 3 waiting calls are held") {
			return nil
		}
		return errors.New("no banner yet")
	})
	if code != 200 {
		t.Fatalf("overview: %d", code)
	}
	if strings.Contains(body, "executor groups: ") {
		t.Fatalf("the console user may not read the groups:\n%s", body)
	}
	if !strings.Contains(body, `data-testid="circuit-open" data-group="erp"`) || !strings.Contains(body, "its 3 waiting calls are held") {
		t.Errorf("no open-circuit banner for erp:\n%s", body)
	}
	if strings.Contains(body, `data-testid="circuit-open" data-group="weather"`) {
		t.Errorf("a banner for weather, whose circuit is closed")
	}
	if !strings.Contains(body, `<tr data-group="weather"><td>weather</td><td class="num">0/8</td><td class="num">0</td><td>closed</td></tr>`) {
		t.Errorf("no closed row for weather:\n%s", body)
	}

	anon := *r.c
	anon.Jar = nil
	resp, err := anon.Get(r.ts.URL + Prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := new(strings.Builder)
	_, _ = io.Copy(buf, resp.Body)
	if strings.Contains(buf.String(), "circuit-open") {
		t.Errorf("the banner is shown without a login")
	}
}
