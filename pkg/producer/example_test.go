package producer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/producer"
)

// A producer's turn: publish the model's response, wait for every outcome
// of its tool calls, and append their tool-result items to the conversation
// for the next model request. Under toolgate's NATS users the connection
// reads replies only under its own inbox prefix, _INBOX_<user>.
func ExampleWatch_AwaitResponse() {
	const user, password = "producer-acme", "from nats-producer-acme.password"
	nc, err := nats.Connect("nats://127.0.0.1:4222", nats.UserInfo(user, password), nats.CustomInboxPrefix("_INBOX_"+user))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	p := producer.New(js).ForTenant("acme")

	body := []byte(`{"id":"chatcmpl-1","object":"chat.completion","choices":[...]}`) // the model's response
	rid := "turn-42"
	w, err := p.Watch(rid) // before publishing: results are not replayed
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = p.PublishResponse(ctx, producer.Meta{Provider: "openai-chat", ResponseID: rid, Tenant: "acme", Principal: "alice"}, body)
	switch {
	case errors.Is(err, producer.ErrDuplicate):
		fmt.Println("published before: its outcomes came then")
		return
	case err != nil:
		fmt.Println(err)
		return
	}
	out, err := w.AwaitResponse(ctx)
	if err != nil && !out.Complete() {
		fmt.Printf("%d of %d calls have an outcome; the rest wait (an approval?)\n", len(out.Calls), out.Expected)
	}
	if err := producer.Refused(out.Response); err != nil {
		fmt.Println(err) // the response id was used before: send it under a new one
		return
	}
	var conversation []json.RawMessage
	conversation = append(conversation, out.Messages()...) // role "tool" messages, in call order
	fmt.Println(len(conversation), out.OK())
}
