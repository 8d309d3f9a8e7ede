package publish

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/secrets"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

// runPublish runs `toolgate publish args...` in this process (runCmd).
func runPublish(t *testing.T, stdin []byte, args ...string) (string, int) {
	t.Helper()
	return clitest.RunCmd(t, stdin, Publish, args...)
}

const (
	weatherCall = `{"id":"chatcmpl-w","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_w","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":"tool_calls"}]}`
	// weatherAndDelete proposes a read and an irreversible call: the
	// second waits for a human.
	weatherAndDelete = `{"id":"chatcmpl-wd","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_w","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}},{"id":"call_d","type":"function","function":{"name":"delete_customer_account","arguments":"{\"customer_id\":\"cus_1\",\"reason\":\"asked\"}"}}]},"finish_reason":"tool_calls"}]}`
	// anthropicWeather is an Anthropic body: no --provider needed.
	anthropicWeather = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Oslo"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`
	// openStream is an OpenAI chat stream cut before its finish_reason.
	openStream = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_w\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}}]},\"finish_reason\":null}]}\n\n"
)

// Issue 17 point 1: against a running, authenticated `toolgate up`,
// publish --wait tells apart a call waiting for approval (its call id, until
// when, how to approve), a stream still open (its idle timer), and a
// re-published response (already published: where its outcomes are), each
// with its own exit code, and says "is toolgate up running" for none of
// them. Before, each printed "no outcome within 5s (is `toolgate up`
// running?)" and exited 1. Publish connects as the producer user (point 3):
// the admin's password is moved away for the producer-only runs.
func TestPublish_wait_tells_approval_open_stream_and_duplicate_apart(t *testing.T) {
	u := clitest.StartUp(t, "--identity-assert-users", authz.Producer) // --roles admin counts (issue 28)
	clitest.ServeExamples(t, u)
	// A producer beside toolgate up but without the admin's password.
	producerOnly := t.TempDir()
	pw, err := secrets.Read(u.Secrets, authz.PasswordFile(authz.Producer))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(producerOnly, authz.PasswordFile(authz.Producer)), []byte(pw), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("every call executed: exit 0, provider detected", func(t *testing.T) {
		t.Setenv("TOOLGATE_SECRETS", producerOnly)
		out, code := runPublish(t, nil, clitest.WriteFile(t, "w.json", anthropicWeather), "--nats", u.URL, "--response-id", "pw-ok", "--wait", "30s")
		if code != 0 || !strings.Contains(out, "pw-ok-0") || !strings.Contains(out, "executed") || !strings.Contains(out, "one anthropic response") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})

	t.Run("a call waiting for approval: exit 4, call id, until, how", func(t *testing.T) {
		// As the operator beside toolgate up, --wait reads where the call is.
		out, code := runPublish(t, nil, clitest.WriteFile(t, "wd.json", weatherAndDelete), "--nats", u.URL, "--response-id", "pw-appr", "--roles", "admin", "--wait", "5s")
		if code != exitPublishWaiting {
			t.Fatalf("exit %d, want %d:\n%s", code, exitPublishWaiting, out)
		}
		for _, want := range []string{"pw-appr-0", "executed", "1 of 2 calls have an outcome", "pw-appr-1 delete_customer_account: approval_required", "waiting for approval", "until ", "toolgate approve pw-appr-1 --by NAME"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q", want)
			}
		}
		if strings.Contains(out, "is `toolgate up` running") {
			t.Error("blamed toolgate up while it answered")
		}
		// As the producer alone, without the admin's password, the policy
		// stage's notice on the response's progress subject says which call
		// waits for approval and until when.
		t.Setenv("TOOLGATE_SECRETS", producerOnly)
		out, code = runPublish(t, nil, clitest.WriteFile(t, "wd.json", weatherAndDelete), "--nats", u.URL, "--response-id", "pw-appr2", "--roles", "admin", "--wait", "5s")
		if code != exitPublishWaiting || !strings.Contains(out, "1 of 2 calls have an outcome") ||
			!strings.Contains(out, "call pw-appr2-1 (delete_customer_account) waits for approval until ") || !strings.Contains(out, "toolgate approve pw-appr2-1 --by NAME") {
			t.Fatalf("producer only: exit %d:\n%s", code, out)
		}
		if strings.Contains(out, "cus_1") || strings.Contains(out, "may wait for a human approval") {
			t.Errorf("producer only: arguments, or a guess where toolgate said:\n%s", out)
		}
	})

	t.Run("an open stream: exit 4, idle timer", func(t *testing.T) {
		t.Setenv("TOOLGATE_SECRETS", producerOnly)
		out, code := runPublish(t, nil, clitest.WriteFile(t, "open.sse", openStream), "--nats", u.URL, "--response-id", "pw-open", "--wait", "3s")
		if code != exitPublishWaiting || !strings.Contains(out, "stream pw-open is still open") || !strings.Contains(out, "idle timer") || !strings.Contains(out, "--end REASON") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		// --end settles it at once: transport_incomplete, a failure.
		out, code = runPublish(t, nil, clitest.WriteFile(t, "open.sse", openStream), "--nats", u.URL, "--response-id", "pw-ended", "--end", "client went away", "--wait", "30s")
		if code != exitPublishFailed || !strings.Contains(out, "transport_incomplete") {
			t.Fatalf("--end: exit %d:\n%s", code, out)
		}
	})

	t.Run("a body of another provider than --provider: a hint, then exit 3", func(t *testing.T) {
		t.Setenv("TOOLGATE_SECRETS", producerOnly)
		out, code := runPublish(t, nil, clitest.WriteFile(t, "a.json", anthropicWeather), "--nats", u.URL, "--provider", "openai-chat", "--response-id", "pw-wrong", "--wait", "30s")
		if code != exitPublishFailed || !strings.Contains(out, "looks like anthropic, not openai-chat") || !strings.Contains(out, "rejected") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})

	t.Run("without the producer's password: what to set, at once", func(t *testing.T) {
		t.Setenv("TOOLGATE_SECRETS", t.TempDir())
		out, code := runPublish(t, nil, clitest.WriteFile(t, "w.json", weatherCall), "--nats", u.URL, "--response-id", "pw-anon")
		if code != 1 || !strings.Contains(out, "may not read replies") || !strings.Contains(out, "nats-producer.password") || !strings.Contains(out, "TOOLGATE_SECRETS") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})

	t.Run("a duplicate: exit 5, where its outcomes are", func(t *testing.T) {
		t.Setenv("TOOLGATE_SECRETS", producerOnly)
		file := clitest.WriteFile(t, "w.json", weatherCall)
		if _, code := runPublish(t, nil, file, "--nats", u.URL, "--response-id", "pw-dup", "--wait", "30s"); code != 0 {
			t.Fatalf("first publish: exit %d", code)
		}
		out, code := runPublish(t, nil, file, "--nats", u.URL, "--response-id", "pw-dup", "--wait", "3s")
		if code != exitPublishConflict || !strings.Contains(out, "already published") || !strings.Contains(out, "toolgate results pw-dup") || strings.Contains(out, "running?") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
}
