package stage

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/metrics"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

// TestTransitionHook_unknown_tool_names_neither_grow_the_label_set_nor_reach_the_log:
// every name a model invents used to become a label value of its own (an
// attacker-chosen number of series; a 70 KB name a 70 KB label) and appear in
// clear in every log line. Now a registered tool keeps its name; anything
// else is labelled "unregistered" and logged as a short hash.
func TestTransitionHook_unknown_tool_names_neither_grow_the_label_set_nor_reach_the_log(t *testing.T) {
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx := context.Background()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := tool.Load("charge.yaml", []byte(chargeTool))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Apply(ctx, kv, "charge.yaml", defs, false); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(ctx, kv, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if _, ok := reg.Lookup("charge"); !ok {
			return fmt.Errorf("charge not loaded yet")
		}
		return nil
	})
	m := metrics.New()
	var logs bytes.Buffer
	hook := transitionHook(m, zerolog.New(&logs), reg)
	end := func(name, prov string) {
		e := call.New("r", 0, time.Now())
		e.ToolName, e.Provider = name, prov
		e.Status, e.Failure = call.Failed, call.NoSuchTool
		hook("validate", e)
	}
	secret := "sk-live-" + strings.Repeat("x", 70_000)
	for i := range 50 {
		end(fmt.Sprintf("invented_%d", i), "openai-chat")
	}
	end(secret, strings.Repeat("p", 40_000))
	end("charge", "anthropic")
	text := scrape(t, m)
	if strings.Contains(text, "invented_") || strings.Contains(text, "sk-live-") || strings.Contains(text, "ppp") {
		t.Fatal("an unknown tool or provider name became a label value")
	}
	for _, want := range []string{
		`llm_tool_call_total{outcome="no_such_tool",provider="openai-chat",tool="unregistered"} 50`,
		`llm_tool_call_total{outcome="no_such_tool",provider="unknown",tool="unregistered"} 1`,
		`llm_tool_call_total{outcome="no_such_tool",provider="anthropic",tool="charge"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(logs.String(), "sk-live-") || strings.Contains(logs.String(), "invented_") {
		t.Fatal("an unknown tool name reached the log in clear")
	}
	if !strings.Contains(logs.String(), `"tool":"unregistered:`) || !strings.Contains(logs.String(), `"tool":"charge"`) {
		t.Fatalf("log lines lack the hashed and the registered names: %.300s", logs.String())
	}
	if n := logs.Len(); n > 60_000 {
		t.Fatalf("%d bytes of log for 52 transitions: a name reached it whole", n)
	}
}
