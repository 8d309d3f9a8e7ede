package shadow

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/internal/whatif"
	"github.com/toolgate/toolgate/streams"
)

const live = `
tools:
  - name: get_weather
    input_schema: {type: object, properties: {city: {type: string}}, required: [city]}
    policy: {risk: read}
`

const tighter = `
tools:
  - name: get_weather
    input_schema: {type: object, properties: {city: {type: string}}, required: [city]}
    rules:
      - expr: args.city != "Atlantis"
        message: No such city.
    policy: {risk: read, allow: "'ops' in roles"}
`

type buckets struct{ tools, shadows, reports jetstream.KeyValue }

func open(t *testing.T) (context.Context, buckets) {
	t.Helper()
	_, js := testenv.Connect(t, testenv.RunJetStream(t))
	ctx := context.Background()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	var b buckets
	for name, kv := range map[string]*jetstream.KeyValue{streams.BucketTools: &b.tools, streams.BucketToolsShadow: &b.shadows, streams.BucketShadowReport: &b.reports} {
		var err error
		if *kv, err = js.KeyValue(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	return ctx, b
}

func load(t *testing.T, yaml string) []tool.Definition {
	t.Helper()
	defs, err := tool.Load("t.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return defs
}

func TestPromote_makes_the_shadow_live_and_removes_it(t *testing.T) {
	ctx, b := open(t)
	if _, err := registry.Apply(ctx, b.tools, "t.yaml", load(t, live), false); err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(ctx, b.tools, b.shadows, b.reports, "new.yaml", load(t, tighter), time.Now(), 1<<20); err != nil {
		t.Fatal(err)
	}
	_, changes, err := Promote(ctx, b.tools, b.shadows, b.reports)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Action != registry.Changed {
		t.Fatalf("changes %+v, want get_weather changed", changes)
	}
	d, _, err := registry.Get(ctx, b.tools, "get_weather")
	if err != nil || d.Policy.Allow != "'ops' in roles" || len(d.Rules) != 1 {
		t.Fatalf("live get_weather is %+v (%v), want the shadow's", d, err)
	}
	if _, _, err := Load(ctx, b.shadows); !errors.Is(err, ErrNone) {
		t.Fatalf("shadow still there after promote: %v", err)
	}
}

func TestPromote_refuses_when_the_live_tool_changed_since(t *testing.T) {
	ctx, b := open(t)
	if _, err := registry.Apply(ctx, b.tools, "t.yaml", load(t, live), false); err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(ctx, b.tools, b.shadows, b.reports, "new.yaml", load(t, tighter), time.Now(), 1<<20); err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(live, "risk: read", "risk: write", 1)
	if _, err := registry.Apply(ctx, b.tools, "other.yaml", load(t, other), false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Promote(ctx, b.tools, b.shadows, b.reports); err == nil || !strings.Contains(err.Error(), "changed since the shadow was applied") {
		t.Fatalf("promote over a changed live tool: %v", err)
	}
	d, _, _ := registry.Get(ctx, b.tools, "get_weather")
	if d.Policy.Risk != "write" {
		t.Fatalf("live tool is %+v, want the other apply's, untouched", d.Policy)
	}
}

func TestDrop_removes_the_shadow_and_its_report(t *testing.T) {
	ctx, b := open(t)
	rev, err := Apply(ctx, b.tools, b.shadows, b.reports, "new.yaml", load(t, tighter), time.Now(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var tl Tally
	tl.reset(rev.ID)
	tl.add(rev.ID, "get_weather", "c-0", whatif.Fate{Kind: whatif.Pass}, "approved", whatif.Fate{Kind: whatif.Refused, Class: call.PolicyRejected}, "")
	if err := tl.Flush(ctx, b.reports); err != nil {
		t.Fatal(err)
	}
	if _, err := Drop(ctx, b.shadows, b.reports); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(ctx, b.shadows); !errors.Is(err, ErrNone) {
		t.Fatalf("shadow still there after drop: %v", err)
	}
	if keys, err := b.reports.Keys(ctx); !errors.Is(err, jetstream.ErrNoKeysFound) {
		t.Fatalf("report keys after drop: %v %v", keys, err)
	}
	if _, err := Drop(ctx, b.shadows, b.reports); !errors.Is(err, ErrNone) {
		t.Fatalf("second drop: %v, want ErrNone", err)
	}
}

func TestApply_refuses_a_broken_or_oversized_revision(t *testing.T) {
	ctx, b := open(t)
	defs := load(t, tighter)
	defs[0].Rules[0].Expr = "args.city !="
	if _, err := Apply(ctx, b.tools, b.shadows, b.reports, "bad.yaml", defs, time.Now(), 1<<20); err == nil {
		t.Fatal("a rule that does not compile was stored as the shadow")
	}
	if _, err := Apply(ctx, b.tools, b.shadows, b.reports, "big.yaml", load(t, tighter), time.Now(), 100); err == nil || !strings.Contains(err.Error(), "more than the 100") {
		t.Fatalf("oversized shadow: %v", err)
	}
	if _, _, err := Load(ctx, b.shadows); !errors.Is(err, ErrNone) {
		t.Fatalf("a refused shadow was stored: %v", err)
	}
}

// envelope is a call as the policy gate receives it.
func envelope(t *testing.T, tool, args string, roles ...string) call.Envelope {
	t.Helper()
	e := call.New("r1", 0, time.Now())
	e.ToolName, e.RawArguments, e.Arguments, e.Request.Roles = tool, args, []byte(args), roles
	for _, s := range []call.Status{call.Parsed, call.Validated, call.BusinessValid} {
		if err := e.Move("test", s, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func TestObserve_counts_nothing_without_a_shadow(t *testing.T) {
	c := &Comparer{Tally: &Tally{}, log: zerolog.Nop(), now: time.Now}
	in := envelope(t, "get_weather", `{"city":"Oslo"}`)
	out := in
	if err := out.Move("policy", call.Approved, time.Now()); err != nil {
		t.Fatal(err)
	}
	c.Observe(context.Background(), in, []call.Envelope{out})
	if d := c.Tally.take(); d != nil {
		t.Fatalf("counted %v with no shadow", d)
	}
}

func TestObserve_records_the_rule_not_the_arguments(t *testing.T) {
	a, err := compile(Revision{ID: "s1", Tools: load(t, tighter)})
	if err != nil {
		t.Fatal(err)
	}
	c := &Comparer{Tally: &Tally{}, log: zerolog.Nop(), now: time.Now}
	c.arm(a)
	in := envelope(t, "get_weather", `{"city":"Atlantis"}`, "ops")
	out := in
	if err := out.Move("policy", call.Approved, time.Now()); err != nil {
		t.Fatal(err)
	}
	c.Observe(context.Background(), in, []call.Envelope{out})
	if len(in.History) != 4 {
		t.Fatalf("the live envelope's history changed: %v", in.History)
	}
	r := c.Tally.take()["get_weather"]
	if r == nil || r.Seen != 1 || len(r.Changes) != 1 {
		t.Fatalf("record %+v", r)
	}
	ch := r.Changes[0]
	if ch.Would != "would be rejected: business_invalid" || ch.Why != "rule 1: No such city." || !ch.Refused {
		t.Fatalf("change %+v", ch)
	}
}

func TestRecord_bounds_its_lines_and_examples(t *testing.T) {
	var r Record
	pass := whatif.Fate{Kind: whatif.Pass}
	for i := range MaxChanges + 5 {
		r.add("c", pass, whatif.Fate{Kind: whatif.Refused, Class: call.Status(strings.Repeat("x", i+1))}, "approved", "")
	}
	for range 10 {
		r.add("d", pass, whatif.Fate{Kind: whatif.Refused, Class: "x"}, "approved", "")
	}
	if len(r.Changes) != MaxChanges || r.More != 5 || len(r.Changes[0].Examples) != whatif.Examples || r.Changes[0].Count != 11 {
		t.Fatalf("lines %d, more %d, first %+v", len(r.Changes), r.More, r.Changes[0])
	}
}

func TestWhy_keeps_no_schema_message(t *testing.T) {
	got := why(tool.Definition{}, whatif.Fate{Kind: whatif.Refused, Class: call.SchemaInvalid}, []string{"amount: 5000 is more than 100 (maximum)"})
	if got != "schema: amount (maximum)" {
		t.Fatalf("why %q", got)
	}
}
