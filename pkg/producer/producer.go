// Package producer is the client a producer uses to hand provider responses
// to toolgate and read back what became of their tool calls:
//
//	p := producer.New(js)
//	w, _ := p.Watch(rid) // before publishing: results are not replayed
//	defer w.Stop()
//	_ = p.PublishResponse(ctx, producer.Meta{Provider: "openai-chat", ResponseID: rid}, body)
//	calls, resp, err := w.Await(ctx, 2)
//	items := producer.Messages(calls) // tool-result items to append to the conversation
//
// It imports nats.go, pkg/wire and the standard library only.
package producer

import (
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Producer publishes on toolgate's ingest subjects through JetStream and
// subscribes to results over the same connection.
type Producer struct {
	js     jetstream.JetStream
	nc     *nats.Conn
	tenant string
}

// New returns a Producer on js. The NATS user needs to publish on
// toolgate.in.> and subscribe to its tenant's results,
// toolgate.results.<tenant>.> (the authz "producer" role); it creates no
// consumer.
func New(js jetstream.JetStream) *Producer {
	return &Producer{js: js, nc: js.Conn()}
}

// ForTenant returns a Producer that watches the results of tenant: the
// tenant its calls are made under (its token's, where the deployment
// verifies identity; else its Meta.Tenant). Results are published on
// toolgate.results.<tenant>.<response-id>.
func (p *Producer) ForTenant(tenant string) *Producer {
	q := *p
	q.tenant = tenant
	return &q
}
