package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/gates"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

const weatherV1 = `
tools:
  - name: get_weather
    input_schema: {type: object, properties: {city: {type: string}}, required: [city]}
    policy: {risk: read}
`

// weatherV2 adds a required field: a call that passed v1 fails v2.
const weatherV2 = `
tools:
  - name: get_weather
    input_schema: {type: object, properties: {city: {type: string}, units: {type: string}}, required: [city, units]}
    policy: {risk: read}
`

func apply(t *testing.T, r func() (map[string]uint64, error)) uint64 {
	t.Helper()
	revs, err := r()
	if err != nil {
		t.Fatal(err)
	}
	return revs["get_weather"]
}

func TestRegistry_apply_is_seen_without_restart_and_the_call_records_the_revision(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, js := testenv.Connect(t, testenv.RunJetStream(t))
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	load := func(src string) func() (map[string]uint64, error) {
		return func() (map[string]uint64, error) {
			defs, err := tool.Load("tools.yaml", []byte(src))
			if err != nil {
				return nil, err
			}
			return registry.Apply(ctx, kv, "tools.yaml", defs, false)
		}
	}
	rev1 := apply(t, load(weatherV1))
	reg, err := registry.Open(ctx, kv, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	v := &gates.Validate{Tools: reg, Now: time.Now}
	judge := func() call.Envelope {
		t.Helper()
		e := call.New("resp-1", 0, time.Now())
		e.ToolName, e.Arguments, e.Status = "get_weather", json.RawMessage(`{"city":"Paris"}`), call.Parsed
		out, err := v.Handle(ctx, e)
		if err != nil || len(out) != 1 {
			t.Fatalf("validate: %v %v", out, err)
		}
		return out[0]
	}
	if e := judge(); e.Status != call.Validated || e.ToolRevision != rev1 {
		t.Fatalf("under v1: status %s revision %d, want validated at revision %d", e.Status, e.ToolRevision, rev1)
	}

	rev2 := apply(t, load(weatherV2))
	if rev2 <= rev1 {
		t.Fatalf("revision %d after %d", rev2, rev1)
	}
	testenv.Eventually(t, 5*time.Second, 10*time.Millisecond, func() error {
		if c, ok := reg.Lookup("get_weather"); !ok || c.Revision != rev2 {
			return fmt.Errorf("the open registry still has the old revision")
		}
		return nil
	})
	e := judge()
	if e.Status != call.SchemaInvalid || e.ToolRevision != rev2 || !strings.Contains(strings.Join(e.Errors, " "), "units") {
		t.Fatalf("under v2: status %s revision %d errors %v, want schema_invalid naming units at revision %d", e.Status, e.ToolRevision, e.Errors, rev2)
	}
}

func TestRegistry_broken_file_stores_nothing(t *testing.T) {
	ctx := context.Background()
	_, js := testenv.Connect(t, testenv.RunJetStream(t))
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := tool.Load("tools.yaml", []byte(`
tools:
  - {name: ok_tool, input_schema: {type: object}, policy: {risk: read}}
  - {name: bad_tool, input_schema: {type: object}, rules: [{expr: "args.x >", message: m}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = registry.Apply(ctx, kv, "tools.yaml", defs, false)
	if err == nil || !strings.HasPrefix(err.Error(), "tools.yaml: tool bad_tool: rules[0]: ") {
		t.Fatalf("error %v, want one naming tools.yaml, bad_tool and rules[0]", err)
	}
	if _, _, err := registry.Get(ctx, kv, "ok_tool"); err == nil {
		t.Fatal("ok_tool was stored although its file was refused")
	}
}
