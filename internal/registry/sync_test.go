package registry_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

func toolsBucket(t *testing.T) (context.Context, jetstream.JetStream, jetstream.KeyValue) {
	t.Helper()
	ctx := context.Background()
	_, js := testenv.Connect(t, testenv.RunJetStream(t))
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, js, kv
}

// report is Sync's changes as "name action rev [fields]" lines.
func report(t *testing.T, ctx context.Context, kv jetstream.KeyValue, src string, prune bool) string {
	t.Helper()
	defs, err := tool.Load("tools.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	changes, err := registry.Sync(ctx, kv, "tools.yaml", defs, prune)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range changes {
		lines = append(lines, fmt.Sprintf("%s %s %d %s", c.Name, c.Action, c.Revision, strings.Join(c.Fields, ",")))
	}
	return strings.Join(lines, "\n")
}

func TestSync_reports_added_changed_unchanged_removed_and_writes_only_changes(t *testing.T) {
	ctx, _, kv := toolsBucket(t)
	two := weatherV1 + `  - {name: get_time, input_schema: {type: object}, policy: {risk: read}}
`
	if got, want := report(t, ctx, kv, two, false), "get_weather added 1 \nget_time added 2 "; got != want {
		t.Fatalf("first apply:\n%s\nwant:\n%s", got, want)
	}
	// The same tools, keys in another order and in block style: nothing is written.
	same := `
tools:
  - policy: {risk: read}
    input_schema:
      required: [city]
      properties: {city: {type: string}}
      type: object
    name: get_weather
  - {name: get_time, policy: {risk: read}, input_schema: {type: object}}
`
	if got, want := report(t, ctx, kv, same, false), "get_weather unchanged 1 \nget_time unchanged 2 "; got != want {
		t.Fatalf("identical re-apply:\n%s\nwant:\n%s", got, want)
	}
	if st, err := kv.Status(ctx); err != nil || st.Values() != 2 {
		t.Fatalf("bucket holds %v values (%v), want 2: an unchanged tool was written", st.Values(), err)
	}
	if got, want := report(t, ctx, kv, weatherV2, false), "get_weather changed 3 input_schema\nget_time kept 2 "; got != want {
		t.Fatalf("v2 without prune:\n%s\nwant:\n%s", got, want)
	}
	if got, want := report(t, ctx, kv, weatherV2, true), "get_weather unchanged 3 \nget_time removed 0 "; got != want {
		t.Fatalf("v2 with prune:\n%s\nwant:\n%s", got, want)
	}
	if _, err := kv.Get(ctx, "get_time"); err == nil {
		t.Fatal("pruned get_time is still stored")
	}
	if got, want := report(t, ctx, kv, two, false), "get_weather changed 5 input_schema\nget_time added 6 "; got != want {
		t.Fatalf("re-adding a pruned tool:\n%s\nwant:\n%s", got, want)
	}
}

func TestSync_overwrites_an_unreadable_stored_definition(t *testing.T) {
	ctx, js, kv := toolsBucket(t)
	if _, err := js.Publish(ctx, "$KV."+streams.BucketTools+".get_weather", []byte("junk")); err != nil {
		t.Fatal(err)
	}
	if got, want := report(t, ctx, kv, weatherV1, false), "get_weather changed 2 stored definition unreadable"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
