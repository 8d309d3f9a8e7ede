package whatif

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/ingest"
	"github.com/toolgate/toolgate/internal/natsusers"
	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

const oldTools = `
tools:
  - name: get_weather
    input_schema: {type: object, properties: {city: {type: string, minLength: 1}}, required: [city]}
    policy: {risk: read}
  - name: transfer_funds
    input_schema: {type: object, properties: {amount: {type: integer}, note: {type: string}}, required: [amount]}
    policy: {risk: write}
`

const newTools = `
tools:
  - name: get_weather
    input_schema: {type: object, properties: {city: {type: string, minLength: 1, maxLength: 8}}, required: [city]}
    policy: {risk: read}
  - name: transfer_funds
    input_schema: {type: object, properties: {amount: {type: integer}, note: {type: string}}, required: [amount]}
    rules:
      - {expr: "args.amount <= 1000", message: "no transfer over 1000"}
      - {expr: "args.amount <= 500", message: "a human approves transfers over 500", action: review}
    policy: {risk: write}
`

func evaluator(t testing.TB, yaml string) *Evaluator {
	t.Helper()
	defs, err := tool.Load("tools.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := New(defs)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// input is one whole response as TOOLGATE_IN stores it.
type input struct {
	h    nats.Header
	body []byte
}

// day is n responses of one call each, mixed (valid, too long a city,
// amounts under, over the threshold and over the limit, a schema error,
// invalid JSON), and the status record each call got under the old
// definitions: what the gates decided, executed when they passed.
func day(t testing.TB, n int) ([]input, [][]byte) {
	t.Helper()
	return dayOf(t, n, "")
}

// dayOf is day for tenant's producer ("": none): its responses name it,
// and its calls' ids are the tenant's (acme=<rid>-0).
func dayOf(t testing.TB, n int, tenant string) ([]input, [][]byte) {
	t.Helper()
	old := evaluator(t, oldTools)
	args := []struct{ tool, args string }{
		{"get_weather", `{"city":"Paris"}`},
		{"get_weather", `{"city":"Rio de Janeiro"}`},
		{"transfer_funds", `{"amount":100,"note":"rent"}`},
		{"transfer_funds", `{"amount":700}`},
		{"transfer_funds", `{"amount":5000}`},
		{"transfer_funds", `{"amount":"many"}`},
		{"get_weather", `{"city":`},
	}
	ins := make([]input, n)
	recs := make([][]byte, n)
	for i := range n {
		a := args[i%len(args)]
		body, _ := json.Marshal(map[string]any{"id": fmt.Sprint("chatcmpl-", i), "object": "chat.completion", "model": "gpt-test",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{"role": "assistant",
				"tool_calls": []any{map[string]any{"id": fmt.Sprint("tc", i), "type": "function", "function": map[string]any{"name": a.tool, "arguments": a.args}}}}}}})
		h := nats.Header{}
		h.Set(streams.HeaderProvider, "openai-chat")
		h.Set(streams.HeaderResponseID, fmt.Sprint("r", i))
		if tenant != "" {
			h.Set(streams.HeaderTenant, tenant)
		}
		ins[i] = input{h, body}
		envs, err := Envelopes(h, body, uint64(i+1))
		if err != nil || len(envs) != 1 {
			t.Fatalf("input %d: %v", i, err)
		}
		e := old.Evaluate(context.Background(), envs[0])[0]
		switch {
		case e.Status == call.Approved:
			if err := e.Move("execute", call.Executed, time.Now()); err != nil {
				t.Fatal(err)
			}
		case e.Status.Repairable(): // the repair gate, without a model
			e.Abort("repair", "no_model", fmt.Errorf("no repair model"), time.Now())
		}
		if recs[i], err = json.Marshal(pipeline.StatusOf(e)); err != nil {
			t.Fatal(err)
		}
	}
	return ins, recs
}

// inMemory is the report of ins and recs re-evaluated with ev without
// NATS: what Run must find reading them from the streams.
func inMemory(t testing.TB, ev *Evaluator, ins []input, recs [][]byte) *Report {
	rep := NewReport()
	w := window{ev: ev, rep: rep, recs: map[string]*Recorded{}}
	for i, data := range recs {
		(Source{}).record(rep, w.recs, fmt.Sprint("k", i), jetstream.KeyValuePut, data)
	}
	for i, in := range ins {
		w.input(context.Background(), in.h, in.body, uint64(i+1), false)
	}
	w.finish()
	return rep
}

func TestReport_counts_each_change_of_fate(t *testing.T) {
	ins, recs := day(t, 14)
	rep := inMemory(t, evaluator(t, newTools), ins, recs)
	var lines []string
	for _, tr := range rep.Sorted() {
		lines = append(lines, fmt.Sprintf("%s %d/%d", tr.Tool, tr.Seen, tr.Unchanged))
		for _, c := range tr.Changes {
			lines = append(lines, fmt.Sprintf("%s → %s x%d %v", c.Was, c.Would, c.Count, c.Refused))
		}
	}
	want := []string{
		"get_weather 6/4",
		"executed → would go to repair: schema_invalid x2 true",
		"transfer_funds 8/4",
		"executed → would be rejected: business_invalid x2 true",
		"executed → would wait for approval x2 false",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("report:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if rep.Refused() != 4 {
		t.Errorf("refused %d, want 4", rep.Refused())
	}
	if same := inMemory(t, evaluator(t, oldTools), ins, recs); same.Refused() != 0 || len(same.Sorted()[0].Changes)+len(same.Sorted()[1].Changes) != 0 {
		t.Errorf("the old definitions change fates: %+v", same.JSON())
	}
}

func TestDecodeRecord_refuses_what_is_not_a_record(t *testing.T) {
	for _, data := range []string{"", "null", "[]", "{", `{"call_id":"a"}`, `{"call_id":"a","status":"executed"}`,
		`{"call_id":"a","status":"executed","history":"x"}`, "\xff\xfe", strings.Repeat("[", 100000)} {
		if _, err := DecodeRecord([]byte(data)); err == nil {
			t.Errorf("%.40q decoded", data)
		}
	}
}

// TestRun_from_the_streams reads a recorded day from the streams as the
// admin, who runs a what-if: the report is the in-memory one. The console
// user may not read the raw input at all: it holds producers'
// Toolgate-Token headers, which every record an operator reads has
// redacted.
func TestRun_from_the_streams(t *testing.T) {
	admin, console := adminAndConsole(t)
	ctx := context.Background()
	ins, recs := day(t, 40)
	kv, err := admin.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range ins {
		m := nats.NewMsg(streams.SubjectInResponse)
		m.Header, m.Data = in.h, in.body
		if _, err := admin.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(ctx, call.ID(fmt.Sprint("r", i), 0), recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	ev := evaluator(t, newTools)
	var progress []uint64
	rep, err := Run(ctx, Source{JS: admin, Since: time.Now().Add(-time.Hour), Progress: func(read, total uint64) {
		progress = append(progress, read, total)
	}}, ev)
	if err != nil {
		t.Fatalf("as the admin: %v", err)
	}
	got, _ := json.Marshal(rep.JSON())
	want, _ := json.Marshal(inMemory(t, ev, ins, recs).JSON())
	if string(got) != string(want) {
		t.Fatalf("from the streams:\n%s\nin memory:\n%s", got, want)
	}
	if n := len(progress); n == 0 || progress[n-2] != progress[n-1] {
		t.Errorf("progress %v, want it to end at the total", progress)
	}
	// A window after everything holds nothing.
	late, err := Run(ctx, Source{JS: admin, Since: time.Now().Add(time.Minute)}, ev)
	if err != nil || len(late.Tools) != 0 || len(late.Skipped) != 0 {
		t.Fatalf("late window: %v %+v", err, late)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := console.OrderedConsumer(cctx, streams.StreamIn, jetstream.OrderedConsumerConfig{}); err == nil {
		t.Error("the console user may create a consumer on TOOLGATE_IN")
	}
	if _, err := Run(cctx, Source{JS: console, Since: time.Now().Add(-time.Hour)}, ev); err == nil {
		t.Error("the console user may read the raw input, producers' tokens included")
	}
	if str, err := console.Stream(cctx, streams.StreamIn); err == nil {
		if _, err := str.GetMsg(cctx, 1); err == nil {
			t.Error("the console user may get a message of TOOLGATE_IN")
		}
	}
}

// A tenant's batch responses, stored on its batch subject
// (toolgate.in.t.<tenant>.batch) apart from its interactive ones, are read
// back as its responses are: each of its calls is compared. Before, the
// what-if read only .response, and the batch calls were counted as not
// re-evaluated.
func TestRun_reads_a_tenants_batch_responses_too(t *testing.T) {
	admin, _ := adminAndConsole(t)
	ctx := context.Background()
	ins, recs := dayOf(t, 15, "acme")
	kv, err := admin.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range ins {
		// .response, .batch, and its claimed subjects in
		// TOOLGATE_RESPONSES (issue 30), where the reads pass over
		// accumulate's claim messages.
		subject := []string{streams.InTenantResponse("acme"), streams.InTenantBatch("acme"), streams.InTenantClaimed("acme", fmt.Sprint("r", i))}[i%3]
		m := nats.NewMsg(subject)
		m.Header, m.Data = in.h, in.body
		if _, err := admin.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(ctx, call.ID(call.Key("acme", fmt.Sprint("r", i)), 0), recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	claim := nats.NewMsg(streams.InTenantClaimed("acme", "legacy-1"))
	claim.Header.Set(ingest.HeaderClaimKind, "response")
	if _, err := admin.PublishMsg(ctx, claim); err != nil {
		t.Fatal(err)
	}
	ev := evaluator(t, newTools)
	rep, err := Run(ctx, Source{JS: admin, Since: time.Now().Add(-time.Hour)}, ev)
	if err != nil {
		t.Fatal(err)
	}
	// Read subject by subject: the .response inputs, the .batch ones,
	// then the claimed ones.
	var order []input
	for _, k := range []int{0, 1, 2} {
		for i := k; i < len(ins); i += 3 {
			order = append(order, ins[i])
		}
	}
	got, _ := json.Marshal(rep.JSON())
	want, _ := json.Marshal(inMemory(t, ev, order, recs).JSON())
	if string(got) != string(want) || len(rep.Skipped) != 0 {
		t.Fatalf("from the streams:\n%s\nin memory:\n%s", got, want)
	}
}

// adminAndConsole are the admin's and the console user's connections to an
// embedded server with toolgate's users, its streams ensured.
func adminAndConsole(t *testing.T) (admin, console jetstream.JetStream) {
	t.Helper()
	pw := map[string]string{authz.Admin: "admin-pw-0123456789", authz.Console: "console-pw-0123456789"}
	users, err := natsusers.Users(pw)
	if err != nil {
		t.Fatal(err)
	}
	srv := testenv.RunJetStream(t, func(o *server.Options) { o.Users = users })
	connect := func(user string) jetstream.JetStream {
		nc, err := nats.Connect(srv.ClientURL(), authz.ClientOptions(user, pw[user])...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	admin, console = connect(authz.Admin), connect(authz.Console)
	if err := streams.Ensure(context.Background(), admin, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	return admin, console
}

// BenchmarkWindow_100k re-evaluates 100,000 recorded calls held in memory
// (their status records decoded, their responses decoded and run through
// the new definitions' gates, each compared): the core of a what-if over a
// busy day, without the reading.
func BenchmarkWindow_100k(b *testing.B) { benchWindow(b, newTools) }

// BenchmarkWindow_100k_limits is BenchmarkWindow_100k with a limit on each
// tool: the calls that would run are also held and charged in time order.
func BenchmarkWindow_100k_limits(b *testing.B) { benchWindow(b, newToolsLimits) }

func benchWindow(b *testing.B, yaml string) {
	const n = 100_000
	ins, recs := day(b, n)
	ev := evaluator(b, yaml)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rep := inMemory(b, ev, ins, recs)
		if rep.Tools["get_weather"].Seen+rep.Tools["transfer_funds"].Seen != n {
			b.Fatalf("seen %+v", rep.JSON())
		}
	}
}

func TestReport_prints_a_table_per_tool(t *testing.T) {
	ins, recs := day(t, 7)
	rep := inMemory(t, evaluator(t, newTools), ins, recs)
	rep.Skip("get_weather", SkipAgedOut)
	var b strings.Builder
	rep.Print(&b)
	for _, w := range []string{
		"tool get_weather: 3 seen, 2 unchanged, 1 would change\n",
		"executed → would go to repair: schema_invalid (",
		"e.g. r1-0\n",
		"executed → would be rejected: business_invalid (no transfer over 1000)   e.g. r4-0\n",
		"executed → would wait for approval   e.g. r3-0\n",
		"not re-evaluated: " + SkipAgedOut,
		"2 call(s) that passed every gate would now be refused\n",
		"see one call: toolgate status CALL_ID\n",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("report lacks %q:\n%s", w, b.String())
		}
	}
	t.Log("\n" + b.String())
}

// TestWindow_a_call_without_a_record_is_counted_unless_before_the_window:
// input read from just before the window whose call has no record in it
// is outside the window, not "no status record".
func TestWindow_a_call_without_a_record_is_counted_unless_before_the_window(t *testing.T) {
	ins, _ := day(t, 2)
	rep := NewReport()
	w := window{ev: evaluator(t, newTools), rep: rep, recs: map[string]*Recorded{}}
	w.input(context.Background(), ins[0].h, ins[0].body, 1, true)
	if len(rep.Skipped) != 0 {
		t.Fatalf("input before the window counted: %v", rep.Skipped)
	}
	w.input(context.Background(), ins[1].h, ins[1].body, 2, false)
	if rep.Skipped[SkipNoRecord] != 1 {
		t.Fatalf("a call of the window without a record: %v, want 1 %q", rep.Skipped, SkipNoRecord)
	}
}

// TestWindow_calls_recovered_from_text_are_re_evaluated: a tolerant
// response's calls come from its text, as accumulate and parse find them.
func TestWindow_calls_recovered_from_text_are_re_evaluated(t *testing.T) {
	body, _ := json.Marshal(map[string]any{"id": "chatcmpl-t", "object": "chat.completion", "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant",
			"content": `{"name": "transfer_funds", "arguments": {"amount": 5000}}`}}}})
	h := nats.Header{}
	h.Set(streams.HeaderProvider, "openai-chat")
	h.Set(streams.HeaderResponseID, "rt")
	h.Set(streams.HeaderTolerant, "true")
	envs, err := Envelopes(h, body, 1)
	if err != nil || len(envs) != 1 || !envs[0].Carrier {
		t.Fatalf("envelopes %+v, %v: want one carrier", envs, err)
	}
	outs := evaluator(t, oldTools).Evaluate(context.Background(), envs[0])
	if len(outs) != 1 || outs[0].Status != call.Approved {
		t.Fatalf("under the old tools: %+v", outs)
	}
	e := outs[0]
	if err := e.Move("execute", call.Executed, time.Now()); err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(pipeline.StatusOf(e))
	rep := inMemory(t, evaluator(t, newTools), []input{{h, body}}, [][]byte{rec})
	tr := rep.Tools["transfer_funds"]
	if tr == nil || tr.Seen != 1 || len(tr.Changes) != 1 || !tr.Changes[0].Refused || len(rep.Skipped) != 0 {
		t.Fatalf("report %+v", rep.JSON())
	}
}

// newToolsLimits are newTools with a limit on each tool: one weather call
// per tenant an hour, 150 of amount an hour.
const newToolsLimits = newTools + `
limits:
  - {name: weather_per_tenant, tools: [get_weather], window: 1h, count: 1}
  - {name: amount_per_tenant, tools: [transfer_funds], window: 1h, weight: args.amount, max: 150}
`

// TestReport_counts_the_calls_a_new_limit_would_refuse: the calls the new
// gates would run are charged in time order against the new limits, in
// memory: of the two weather calls and the two transfers of 100 that pass
// every gate, the second of each would exceed its limit.
func TestReport_counts_the_calls_a_new_limit_would_refuse(t *testing.T) {
	ins, recs := day(t, 14)
	rep := inMemory(t, evaluator(t, newToolsLimits), ins, recs)
	var lines []string
	for _, tr := range rep.Sorted() {
		for _, c := range tr.Changes {
			lines = append(lines, fmt.Sprintf("%s: %s → %s x%d %v %v", tr.Tool, c.Was, c.Would, c.Count, c.Refused, c.Examples))
		}
	}
	for _, w := range []string{
		"get_weather: executed → would exceed limit weather_per_tenant x1 true [r7-0]",
		"transfer_funds: executed → would exceed limit amount_per_tenant x1 true [r9-0]",
	} {
		if !slices.Contains(lines, w) {
			t.Errorf("report lacks %q:\n%s", w, strings.Join(lines, "\n"))
		}
	}
	if rep.Refused() != 6 {
		t.Errorf("refused %d, want 6 (4 by the gates, 2 by the limits)", rep.Refused())
	}
	var b strings.Builder
	rep.Print(&b)
	if !strings.Contains(b.String(), "(limit weather_per_tenant: 1 of 1 per 1h0m0s used; this call fits from ") {
		t.Errorf("the line does not say why:\n%s", b.String())
	}

	// A call the old limits refused is compared too: with no limit now it
	// would pass.
	e := evaluator(t, oldTools).Evaluate(context.Background(), mustEnvelopes(t, ins[0])[0])[0]
	if err := e.Move("execute", call.LimitExceeded, time.Now(), "limit x: 5 of 5 per 1h used"); err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(pipeline.StatusOf(e))
	again := inMemory(t, evaluator(t, oldTools), ins[:1], [][]byte{rec})
	if c := again.Tools["get_weather"].Changes; len(c) != 1 || c[0].Was != "rejected: limit_exceeded" || c[0].Would != "would pass" {
		t.Fatalf("a recorded limit_exceeded: %+v", again.JSON())
	}
}

func mustEnvelopes(t *testing.T, in input) []call.Envelope {
	t.Helper()
	envs, err := Envelopes(in.h, in.body, 1)
	if err != nil {
		t.Fatal(err)
	}
	return envs
}
