// Package producer is the client a producer uses to hand provider responses
// to toolgate and read back what became of their tool calls:
//
//	nc, _ := nats.Connect(url, nats.UserInfo("producer", password),
//		nats.CustomInboxPrefix("_INBOX_producer")) // toolgate's authz: replies only under _INBOX_<user>
//	js, _ := jetstream.New(nc)
//	p := producer.New(js) // ForTenant(t) for the user producer-<t>
//	w, _ := p.Watch(rid)  // before publishing: results are not replayed
//	defer w.Stop()
//	err := p.PublishResponse(ctx, producer.Meta{Provider: "openai-chat", ResponseID: rid}, body)
//	out, err := w.AwaitResponse(ctx) // every outcome; no need to count the calls
//	items := out.Messages()          // tool-result items to append to the conversation
//
// A call that waits for a human approval, or a stream left open, has no
// outcome yet when ctx ends: AwaitResponse returns what came, with
// out.Complete() false. ErrDuplicate from a publish means it had arrived
// before. ExampleWatch_AwaitResponse is the whole loop. It imports nats.go,
// pkg/wire and the standard library only.
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
	as     string // the user whose own whole-response subject it publishes on
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

// AssertingAs returns a Producer that publishes whole responses on user's
// own subject, toolgate.in.as.<user>.response (wire.InAsResponse), which
// only NATS user user may publish on. Where toolgate has no identity issuer
// and lists user in --identity-assert-users, its Meta.Tenant, Principal
// and Roles then count (identity asserted); elsewhere roles from headers
// are granted none. For a gateway that authenticates its own callers.
// Streams are published as before.
func (p *Producer) AssertingAs(user string) *Producer {
	q := *p
	q.as = user
	return &q
}
