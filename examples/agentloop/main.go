// Command agentloop is an example agent loop with toolgate between the
// model and the tools: it asks an OpenAI-compatible chat endpoint, hands
// each response to toolgate (pkg/producer), waits for the outcomes of its
// tool calls, appends their tool-result messages (producer.Messages) to the
// conversation and asks again, until the model answers in text.
//
//	go run ./examples/agentloop --model http://127.0.0.1:8000/v1/chat/completions --prompt "Weather in Paris?"
//
// It connects as the tenant-less producer user (TOOLGATE_NATS_USER and
// TOOLGATE_NATS_PASSWORD, else the password `toolgate up` wrote to its
// secrets directory, TOOLGATE_SECRETS, default .toolgate/secrets).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func main() {
	natsURL := flag.String("nats", envOr("TOOLGATE_NATS_URL", nats.DefaultURL), "NATS server URL")
	model := flag.String("model", envOr("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")+"/chat/completions", "OpenAI-compatible chat completions URL")
	name := flag.String("model-name", "gpt-4o-mini", "model name sent in the request")
	prompt := flag.String("prompt", "What is the weather in Paris?", "the user's message")
	flag.Parse()
	nc, err := nats.Connect(*natsURL, credentials(os.Getenv)...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(1)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	answer, err := Loop{Model: *model, ModelName: *name, JS: js, APIKey: os.Getenv("OPENAI_API_KEY")}.Run(ctx, *prompt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(1)
	}
	fmt.Println(answer)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// credentials connect as the tenant-less producer (internal/authz
// Producer), whose inbox prefix is _INBOX_<user>.
func credentials(getenv func(string) string) []nats.Option {
	user, pw := getenv("TOOLGATE_NATS_USER"), getenv("TOOLGATE_NATS_PASSWORD")
	if user == "" {
		dir := getenv("TOOLGATE_SECRETS")
		if dir == "" {
			dir = ".toolgate/secrets"
		}
		b, err := os.ReadFile(filepath.Join(dir, "nats-producer.password"))
		if err != nil {
			return nil // toolgate up --insecure
		}
		user, pw = "producer", strings.TrimSpace(string(b))
	}
	return []nats.Option{nats.UserInfo(user, pw), nats.CustomInboxPrefix("_INBOX_" + user)}
}
