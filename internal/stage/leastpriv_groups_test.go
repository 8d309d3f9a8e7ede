package stage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// The execute user creates its executor groups' durables itself, and may
// create no other consumer: none on another stream, none on its groups'
// stream filtered on anything but the groups' subjects.
func TestLeastPrivilege_execute_creates_its_group_durables_and_no_other_consumer(t *testing.T) {
	r := startLeastPrivilegeRig(t)
	_ = waitOrDenied(t, r.pipe, r.denied, publishWeather(r.pipe, "lp-group"), 1)
	ctx := context.Background()
	if _, err := r.js.Consumer(ctx, streams.StreamExecute, streams.ExecuteDurable("get_weather")); err != nil {
		t.Fatalf("get_weather's group durable: %v", err)
	}
	var denied testenv.Violations
	_, js := r.connectAs(streams.Execute, nats.ErrorHandler(denied.Handler))
	s := streams.DefaultSettings()
	for _, c := range []streams.Consumer{
		{Name: "sneaky", Stream: streams.StreamGates, Subject: streams.Gate(streams.Parse)},
		{Name: streams.Parse, Stream: streams.StreamGates, Subject: streams.Gate(streams.Parse)},
		{Name: "sneaky", Stream: streams.StreamIn, Subject: "toolgate.in.>"},
		{Name: "sneaky", Stream: streams.StreamExecute, Subject: streams.ExecuteSchedules()},
	} {
		api := "$JS.API.CONSUMER.CREATE." + c.Stream + "." + c.Name
		testenv.Refused(t, fmt.Sprintf("the execute user creating consumer %s on %s filtered %s", c.Name, c.Stream, c.Subject),
			func() error { return denied.SawPrefix(api) },
			func(ctx context.Context) error {
				_, err := js.CreateOrUpdateConsumer(ctx, c.Stream, s.Config(c))
				return err
			})
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, streams.StreamExecute, s.Config(streams.ExecuteGroupConsumer("newgroup", 3))); err != nil {
		t.Fatalf("the execute user cannot create a group durable: %v", err)
	}
	pause := "$JS.API.CONSUMER.PAUSE." + streams.StreamGates + "." + streams.Parse
	testenv.Refused(t, "the execute user pausing the parse durable", func() error { return denied.Saw(pause) },
		func(ctx context.Context) error {
			_, err := js.PauseConsumer(ctx, streams.StreamGates, streams.Parse, time.Now().Add(time.Minute))
			return err
		})
}

// publishWeather publishes one get_weather call as response rid.
func publishWeather(p *pipe, rid string) string {
	p.publish(rid, "openai-chat", chat(rid, "get_weather", `{"city":"Oslo"}`, "tool_calls"))
	return rid
}
