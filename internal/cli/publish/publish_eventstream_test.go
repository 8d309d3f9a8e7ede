package publish

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// `toolgate publish --provider bedrock-converse` takes a raw ConverseStream
// body (AWS event-stream framing) and publishes one JSON event per frame,
// wrapped with its event type, on toolgate.in.stream.<rid>; a damaged body
// is refused before anything is published.
func TestPublish_bedrock_event_stream_body_is_one_event_per_frame(t *testing.T) {
	t.Setenv("TOOLGATE_SECRETS", t.TempDir())
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx := context.Background()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile("../../../internal/provider/testdata/provider-fixtures/bedrock-converse/aws-converse-stream-tool-use.eventstream")
	if err != nil {
		t.Fatal(err)
	}
	want, err := provider.SplitTranscript(body)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "converse.eventstream")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Publish([]string{"--nats", srv.ClientURL(), "--provider", provider.BedrockConverse, "--response-id", "bd-pub", path}); err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for _, m := range fetchIn(t, js, "bd-pub") {
		if p := m.Headers().Get(streams.HeaderProvider); p != provider.BedrockConverse {
			t.Errorf("provider header %q", p)
		}
		got = append(got, m.Data())
	}
	if len(got) != len(want) || len(got) != 11 {
		t.Fatalf("published %d events, want %d", len(got), len(want))
	}
	for i := range got {
		if string(got[i]) != string(want[i]) {
			t.Errorf("event %d = %s, want %s", i+1, got[i], want[i])
		}
	}
	// Cut inside the last frame (metadata): the complete frames go out, then
	// Toolgate-End naming the cut, so the response settles unfinished.
	if err := os.WriteFile(path, body[:len(body)-5], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Publish([]string{"--nats", srv.ClientURL(), "--provider", provider.BedrockConverse, "--response-id", "bd-pub-cut", path}); err != nil {
		t.Fatal(err)
	}
	cut := fetchIn(t, js, "bd-pub-cut")
	if len(cut) != 11 || string(cut[9].Data()) != string(want[9]) || cut[10].Headers().Get(streams.HeaderEnd) == "" {
		t.Fatalf("cut body: %d messages, want the 10 complete frames and an end marker", len(cut))
	}
	body[len(body)-1] ^= 1 // the last frame's CRC: damage, not a cut
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Publish([]string{"--nats", srv.ClientURL(), "--provider", provider.BedrockConverse, "--response-id", "bd-pub-bad", path}); err == nil {
		t.Fatal("a damaged event-stream body was published")
	}
	if n := len(fetchIn(t, js, "bd-pub-bad")); n != 0 {
		t.Fatalf("%d events of a damaged body were published", n)
	}
}

// fetchIn returns the messages stored on toolgate.in.stream.<rid>.
func fetchIn(t *testing.T, js jetstream.JetStream, rid string) []jetstream.Msg {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, streams.StreamIn)
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{streams.InStream(rid)}})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := c.FetchNoWait(100)
	if err != nil {
		t.Fatal(err)
	}
	var out []jetstream.Msg
	for m := range msgs.Messages() {
		out = append(out, m)
	}
	return out
}
