package publish

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// A Gemini streamGenerateContent body without alt=sse, as the API writes it,
// is published one stream event per array element (Toolgate-Seq 1..n); cut
// inside its last element, the complete ones go out, then Toolgate-End with
// the reason, never a fragment. Before, the array was published as one whole
// response, which accumulate refused (undecodable_response).
func TestPublish_gemini_json_array_is_one_event_per_element(t *testing.T) {
	t.Setenv("TOOLGATE_SECRETS", t.TempDir()) // an open server: no generated password
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	chunk1 := "{\n  \"candidates\": [\n    {\n      \"content\": {\n        \"parts\": [\n          {\n            \"text\": \"look },{ [here]\"\n          }\n        ],\n        \"role\": \"model\"\n      }\n    }\n  ]\n}"
	chunk2 := "{\n  \"candidates\": [\n    {\n      \"content\": {\n        \"parts\": [\n          {\n            \"functionCall\": {\n              \"name\": \"getWeather\",\n              \"args\": {\n                \"location\": \"Tokyo\"\n              }\n            }\n          }\n        ],\n        \"role\": \"model\"\n      },\n      \"finishReason\": \"STOP\"\n    }\n  ]\n}"
	whole := "[" + chunk1 + "\n,\r\n" + chunk2 + "\n]"
	for _, test := range []struct {
		name, body string
		want       []string
		cut        bool
	}{
		{"whole", whole, []string{chunk1, chunk2}, false},
		{"cut inside the second element", whole[:len(whole)-40], []string{chunk1}, true},
	} {
		t.Run(test.name, func(t *testing.T) {
			rid := "gemini-array-" + strings.ReplaceAll(test.name, " ", "-")
			file := filepath.Join(t.TempDir(), "stream.json")
			if err := os.WriteFile(file, []byte(test.body), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := Publish([]string{"--nats", srv.ClientURL(), "--provider", "gemini", "--response-id", rid, file}); err != nil {
				t.Fatal(err)
			}
			msgs := streamMessages(ctx, t, js, wire.InStream(rid), len(test.want)+map[bool]int{true: 1}[test.cut])
			for i, want := range test.want {
				if got := string(msgs[i].Data()); got != want {
					t.Errorf("event %d = %q, want %q", i+1, got, want)
				}
				if seq := msgs[i].Headers().Get(wire.HeaderSeq); seq != string(rune('1'+i)) {
					t.Errorf("event %d has Toolgate-Seq %q", i+1, seq)
				}
			}
			if test.cut {
				end := msgs[len(msgs)-1]
				if reason := end.Headers().Get(wire.HeaderEnd); !strings.Contains(reason, "cut") || len(end.Data()) != 0 {
					t.Errorf("last message: end %q, body %q; want Toolgate-End naming the cut and no body", reason, end.Data())
				}
			} else if _, ok := msgs[len(msgs)-1].Headers()[wire.HeaderEnd]; ok {
				t.Error("a whole array got a Toolgate-End")
			}
		})
	}
	file := filepath.Join(t.TempDir(), "cut.json")
	if err := os.WriteFile(file, []byte(`[{"candidates":[{"content":{"parts":[{"text":"x`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Publish([]string{"--nats", srv.ClientURL(), "--provider", "gemini", "--response-id", "gemini-array-nothing", file}); err == nil || !strings.Contains(err.Error(), "cut") {
		t.Errorf("a cut array with no complete element: %v, want an error naming the cut", err)
	}
}

// streamMessages reads the n messages stored on subject, and fails when
// there are more.
func streamMessages(ctx context.Context, t *testing.T, js jetstream.JetStream, subject string, n int) []jetstream.Msg {
	t.Helper()
	c, err := js.OrderedConsumer(ctx, streams.StreamIn, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.Fetch(n+1, jetstream.FetchMaxWait(time.Second)) // more than stored: returns what is there
	if err != nil {
		t.Fatal(err)
	}
	var out []jetstream.Msg
	for m := range batch.Messages() {
		out = append(out, m)
	}
	if len(out) != n {
		t.Fatalf("%s holds %d messages, want %d", subject, len(out), n)
	}
	return out
}
