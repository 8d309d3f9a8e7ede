package publish

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/natsmap/embedded"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// With P = 3 a stream's events are stored in its partition of TOOLGATE_IN
// (streams/in_partitions.go): status of the response counts them there.
func TestStatus_open_stream_in_a_partition_shows_its_events(t *testing.T) {
	t.Setenv("TOOLGATE_SECRETS", t.TempDir())
	t.Setenv("TOOLGATE_NATS_USER", "")
	srv := testenv.RunJetStream(t)
	if err := embedded.Apply(srv, 3); err != nil {
		t.Fatal(err)
	}
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set := streams.DefaultSettings()
	set.Fair.Partitions = 3
	if err := streams.Ensure(ctx, js, set); err != nil {
		t.Fatal(err)
	}
	rid := ""
	for _, id := range []string{"st-a", "st-b", "st-c", "st-d", "st-e", "st-f", "st-g"} {
		if streams.ResponsePartition("", id, 3) != 0 {
			rid = id
			break
		}
	}
	data := []byte(`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"thinking"}}]}`)
	for _, seq := range []string{"1", "2"} {
		m := nats.NewMsg(streams.InStream(rid))
		m.Data = data
		m.Header.Set(streams.HeaderProvider, "openai-chat")
		m.Header.Set(streams.HeaderResponseID, rid)
		m.Header.Set(streams.HeaderSeq, seq)
		ack, err := js.PublishMsg(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if ack.Stream != streams.InputStream(streams.ResponsePartition("", rid, 3)) {
			t.Fatalf("stored in %s", ack.Stream)
		}
	}
	var out bytes.Buffer
	if err := RunStatus(&out, []string{"--nats", srv.ClientURL(), rid}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "stream open: 2 events, last ") {
		t.Fatalf("status of an open stream in a partition:\n%s", out.String())
	}
}
