package dlq

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/streams"
)

// route sets the subject each replayed call is published to: the subject
// the pipeline's own hop to its stage takes (pipeline.Emitter.Subject). A
// call replayed at execute goes to its tool's executor group, read from the
// tools bucket now (issue 38): on the legacy execute subject it would run
// outside its group's bulkhead and circuit, beside every other group. A
// tool no longer registered keeps the legacy subject, whose durable ends
// the call as the policy gate's hop would.
func route(ctx context.Context, js jetstream.JetStream, plan []*planned) error {
	var tools jetstream.KeyValue
	groups := map[string]string{} // tool → group; "": not registered
	var lookupErr error
	em := &pipeline.Emitter{ExecGroup: func(name string) (string, bool) {
		if g, ok := groups[name]; ok {
			return g, g != ""
		}
		if tools == nil {
			kv, err := js.KeyValue(ctx, streams.BucketTools)
			if err != nil {
				lookupErr = fmt.Errorf("dlq: bucket %s: %w", streams.BucketTools, err)
				return "", false
			}
			tools = kv
		}
		d, _, err := registry.Get(ctx, tools, name)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			groups[name] = ""
			return "", false
		case err != nil:
			lookupErr = err
			return "", false
		}
		groups[name] = d.Group()
		return groups[name], true
	}}
	for _, p := range plan {
		if p.skip != "" || p.stage == "" || p.letter.Input() {
			continue
		}
		p.subject = em.Subject(p.stage, *p.letter.Envelope)
		if lookupErr != nil {
			return lookupErr
		}
	}
	return nil
}
