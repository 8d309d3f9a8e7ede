package publish

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"
)

// Issue 17 point 12: publish detects the provider from the body, takes its
// flags after the file, reads stdin for "-" or no file, and sends
// --tenant, --model, --conversation and --atomic as their headers. Before,
// --provider defaulted to openai-chat, "publish FILE --wait 5s" failed and
// there was no stdin.
func TestPublish_detects_the_provider_takes_flags_after_the_file_and_reads_stdin(t *testing.T) {
	t.Setenv("TOOLGATE_SECRETS", t.TempDir()) // an open server: no generated password
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	url := srv.ClientURL()
	// stored is the last message on subject: a tenant's interactive
	// response is published on its claimed subject (wire.InTenantClaimed,
	// in TOOLGATE_RESPONSES), its batch response on its batch subject.
	stored := func(t *testing.T, subject string) map[string]string {
		t.Helper()
		stream := streams.StreamIn
		if _, rest, ok := wire.SplitInTenant(subject); ok && strings.HasPrefix(rest, wire.InTenantClaimedRest) {
			stream = streams.StreamResponses
		}
		st, err := js.Stream(ctx, stream)
		if err != nil {
			t.Fatal(err)
		}
		m, err := st.GetLastMsgForSubject(ctx, subject)
		if err != nil {
			t.Fatal(err)
		}
		h := map[string]string{"body": string(m.Data)}
		for _, k := range []string{wire.HeaderProvider, wire.HeaderResponseID, wire.HeaderTenant, wire.HeaderModel, wire.HeaderConversation, wire.HeaderAtomic} {
			h[k] = m.Header.Get(k)
		}
		return h
	}

	out, code := runPublish(t, []byte(anthropicWeather), "-", "--nats", url, "--response-id", "pf-stdin", "--tenant", "acme", "--model", "claude-sonnet-4-5", "--conversation", "conv-1", "--atomic")
	if code != 0 || !strings.Contains(out, "one anthropic response") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	h := stored(t, wire.InTenantClaimed("acme", "pf-stdin"))
	want := map[string]string{"body": anthropicWeather, wire.HeaderProvider: provider.Anthropic, wire.HeaderResponseID: "pf-stdin", wire.HeaderTenant: "acme",
		wire.HeaderModel: "claude-sonnet-4-5", wire.HeaderConversation: "conv-1", wire.HeaderAtomic: "true"}
	for k, v := range want {
		if h[k] != v {
			t.Errorf("%s = %q, want %q", k, h[k], v)
		}
	}
	// No file at all reads stdin too; its response id says so.
	if out, code := runPublish(t, []byte(weatherCall), "--nats", url); code != 0 || !strings.Contains(out, "published stdin-") {
		t.Fatalf("no file: exit %d:\n%s", code, out)
	}
	if h := stored(t, streams.SubjectInResponse); h[wire.HeaderProvider] != provider.OpenAIChat || !strings.HasPrefix(h[wire.HeaderResponseID], "stdin-") {
		t.Errorf("stdin without -: %v", h)
	}
	// --priority batch: a tenant's batch response goes on its own batch
	// subject, which accumulate takes after the tenant's interactive ones.
	if out, code := runPublish(t, []byte(weatherCall), "--nats", url, "--response-id", "pf-batch", "--tenant", "acme", "--priority", "batch", "-"); code != 0 {
		t.Fatalf("--priority batch: exit %d:\n%s", code, out)
	}
	if h := stored(t, wire.InTenantBatch("acme")); h[wire.HeaderResponseID] != "pf-batch" {
		t.Errorf("--priority batch: last on %s is %v, want pf-batch", wire.InTenantBatch("acme"), h)
	}
	// The same response again is a duplicate: exit 5, also without --wait.
	if out, code := runPublish(t, []byte(anthropicWeather), "--nats", url, "--response-id", "pf-stdin", "--tenant", "acme", "--model", "claude-sonnet-4-5", "--conversation", "conv-1", "--atomic", "-"); code != exitPublishConflict || !strings.Contains(out, "already published") {
		t.Fatalf("duplicate: exit %d:\n%s", code, out)
	}
	// Other content under the used id is refused at publish: exit 5.
	if out, code := runPublish(t, []byte(weatherCall), "--nats", url, "--response-id", "pf-stdin", "--tenant", "acme", "-"); code != exitPublishConflict || !strings.Contains(out, "response_id_conflict") {
		t.Fatalf("other content under a used id: exit %d:\n%s", code, out)
	}

	// What cannot be run as given exits 2 and publishes nothing.
	for _, test := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"an unknown shape", `{"result":"ok"}`, []string{"-"}, "give --provider, one of openai-chat, openai-responses, anthropic, gemini, ollama, bedrock-converse, cohere, gemini-interactions"},
		{"an unknown provider", weatherCall, []string{"--provider", "openai", "-"}, "use one of openai-chat"},
		{"two files", weatherCall, []string{"a.json", "b.json"}, "want one FILE"},
		{"--end on a whole body", weatherCall, []string{"--end", "gone", "-"}, "--end marks the end of a stream"},
		{"a bad response id", weatherCall, []string{"--response-id", "a.b", "-"}, "--response-id"},
		{"an unknown priority", weatherCall, []string{"--priority", "urgent", "-"}, "--priority \"urgent\": want interactive or batch"},
	} {
		before := stored(t, streams.SubjectInResponse)
		out, code := runPublish(t, []byte(test.stdin), append([]string{"--nats", url}, test.args...)...)
		if code != 2 || !strings.Contains(out, test.want) {
			t.Errorf("%s: exit %d, want 2 and %q:\n%s", test.name, code, test.want, out)
		}
		if after := stored(t, streams.SubjectInResponse); after[wire.HeaderResponseID] != before[wire.HeaderResponseID] {
			t.Errorf("%s: published %s", test.name, after[wire.HeaderResponseID])
		}
	}
}
