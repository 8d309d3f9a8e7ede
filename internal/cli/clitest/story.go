package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/stage"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// storyTools: a read tool the rig serves, a write tool nobody serves, an
// irreversible tool (a human approves each call) the rig serves.
const storyTools = `
tools:
  - name: get_weather
    description: Current weather for a city.
    input_schema: {type: object, properties: {city: {type: string, minLength: 1}}, required: [city], additionalProperties: false}
    policy: {risk: read}
  - name: transfer_funds
    description: Moves money. No executor serves it in these tests.
    input_schema: {type: object, properties: {amount: {type: integer}}, required: [amount]}
    executor: {timeout: 1s}
    policy: {risk: write}
  - name: close_account
    description: Closes an account. A human approves each call.
    input_schema: {type: object, properties: {id: {type: string}}, required: [id]}
    policy: {risk: irreversible}
`

// StoryRig is every stage in this process over an embedded NATS server and
// a real redis-server, as `toolgate up` runs them, with storyTools applied
// and get_weather and close_account served.
type StoryRig struct {
	URL string
	NC  *nats.Conn
	JS  jetstream.JetStream
}

func StartStoryRig(t *testing.T) *StoryRig {
	t.Helper()
	return StartRig(t, Rig{File: "story.yaml", Tools: storyTools, Serve: []string{"get_weather", "close_account"},
		Result: func(name string) string { return `{"temp_c":21,"tool":"` + name + `"}` }})
}

// StartPartitionedStoryRig is StartStoryRig with P = p partitions of the
// streams and stages.
func StartPartitionedStoryRig(t *testing.T, p int) *StoryRig {
	t.Helper()
	return StartRig(t, Rig{File: "story.yaml", Tools: storyTools, Serve: []string{"get_weather", "close_account"},
		Result: func(name string) string { return `{"temp_c":21,"tool":"` + name + `"}` }, Partitions: p})
}

// Rig is what StartRig applies and serves.
type Rig struct {
	File, Tools string                   // the tools file applied before the stages start
	Serve       []string                 // the tools the rig's executor answers
	Result      func(tool string) string // the result (JSON) it answers each with
	Partitions  int                      // P of the streams and stages (0: 1)
}

// StartRig is a StoryRig with rig's tools applied and served instead of
// storyTools.
func StartRig(t *testing.T, rig Rig) *StoryRig {
	t.Helper()
	t.Setenv("TOOLGATE_SECRETS", t.TempDir()) // no generated password: an open server
	t.Setenv("TOOLGATE_NATS_USER", "")
	srv := testenv.RunJetStream(t)
	rds := testenv.RunRedis(t)
	nc, js := testenv.Connect(t, srv)
	ctx := context.Background()
	set := streams.DefaultSettings()
	set.Fair.Partitions = rig.Partitions
	if err := streams.Ensure(ctx, js, set); err != nil {
		t.Fatal(err)
	}
	ApplyTools(t, js, rig.File, rig.Tools)
	for _, name := range rig.Serve {
		reply := []byte(`{"ok":true,"result":` + rig.Result(name) + `}`)
		if _, err := nc.Subscribe(streams.Exec(name), func(m *nats.Msg) {
			_ = m.Respond(reply)
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	cfg := stage.Config{NATSURL: srv.ClientURL(), RedisURL: rds.URL(), Stages: streams.Names(), Settings: set,
		Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)}
	rctx, cancel := context.WithCancel(context.Background())
	done, ready := make(chan error, 1), make(chan struct{})
	go func() { done <- stage.Run(rctx, cfg, ready) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("stages stopped at start: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("stages not ready")
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return &StoryRig{URL: srv.ClientURL(), NC: nc, JS: js}
}

// ApplyTools applies the tools file defsYAML, named file, to the tools
// bucket as `toolgate tools apply` does.
func ApplyTools(t *testing.T, js jetstream.JetStream, file, defsYAML string) {
	t.Helper()
	ctx := context.Background()
	defs, err := tool.Load(file, []byte(defsYAML))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Apply(ctx, kv, file, defs, false); err != nil {
		t.Fatal(err)
	}
}

// ToolCall is one call of an OpenAI chat response.
type ToolCall struct{ ID, Name, Args string }

// Publish publishes an OpenAI chat completion proposing calls, as a
// producer does, under response id rid.
func (r *StoryRig) Publish(t *testing.T, rid string, calls ...ToolCall) {
	t.Helper()
	r.PublishAs(t, "", rid, calls...)
}

// PublishAs is Publish as tenant's producer: on the tenant's own subject
// (the rig's server is open, so anyone may), the shared one when tenant is
// empty.
func (r *StoryRig) PublishAs(t *testing.T, tenant, rid string, calls ...ToolCall) {
	t.Helper()
	var tcs []map[string]any
	for _, c := range calls {
		tcs = append(tcs, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Args}})
	}
	body, _ := json.Marshal(map[string]any{"id": "chatcmpl-" + rid, "object": "chat.completion", "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{"role": "assistant", "content": nil, "tool_calls": tcs}}}})
	m := nats.NewMsg(wire.InResponseFor(tenant))
	m.Header.Set(streams.HeaderProvider, "openai-chat")
	m.Header.Set(streams.HeaderResponseID, rid)
	m.Data = body
	if _, err := r.JS.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

// Run runs a command function against the rig and returns its output.
func (r *StoryRig) Run(fn func(w *bytes.Buffer, args []string) error, args ...string) (string, error) {
	var b bytes.Buffer
	err := fn(&b, append([]string{"--nats", r.URL}, args...))
	return b.String(), err
}

// Code is the exit code a command's error gives.
func Code(err error) int {
	var ee *cmdutil.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, cmdutil.ErrUsage):
		return 2
	}
	return 1
}

// WaitFor runs the command until its output holds every want, and returns
// that output.
func (r *StoryRig) WaitFor(t *testing.T, fn func(w *bytes.Buffer, args []string) error, args []string, want ...string) string {
	t.Helper()
	var out string
	testenv.Eventually(t, 60*time.Second, 100*time.Millisecond, func() error {
		var err error
		out, err = r.Run(fn, args...)
		for _, w := range want {
			if !strings.Contains(out, w) {
				return fmt.Errorf("output lacks %q (err %v):\n%s", w, err, out)
			}
		}
		return nil
	})
	return out
}

// NatsMsg is a message for subject with data and room for headers.
func NatsMsg(subject string, data []byte) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Data = data
	return m
}
