package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/natsusers"
	"github.com/toolgate/toolgate/internal/records"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/whatif"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

// whatIfOld are the definitions the day of traffic ran under; whatIfNew
// tightens get_weather's schema, adds a rule to transfer_funds (no amount
// over 1000) and an approval threshold (a human approves amounts over 500).
const whatIfOld = `
tools:
  - name: get_weather
    input_schema: {type: object, properties: {city: {type: string, minLength: 1}}, required: [city], additionalProperties: false}
    policy: {risk: read}
  - name: transfer_funds
    input_schema: {type: object, properties: {amount: {type: integer}}, required: [amount]}
    policy: {risk: write}
  - name: close_account
    input_schema: {type: object, properties: {id: {type: string}}, required: [id]}
    policy: {risk: irreversible}
`

const whatIfNew = `
tools:
  - name: get_weather
    input_schema: {type: object, properties: {city: {type: string, minLength: 1, maxLength: 8}}, required: [city], additionalProperties: false}
    policy: {risk: read}
  - name: transfer_funds
    input_schema: {type: object, properties: {amount: {type: integer}}, required: [amount]}
    rules:
      - {expr: "args.amount <= 1000", message: "no transfer over 1000"}
      - {expr: "args.amount <= 500", message: "a human approves transfers over 500", action: review}
    policy: {risk: write}
  - name: close_account
    input_schema: {type: object, properties: {id: {type: string}}, required: [id]}
    policy: {risk: irreversible}
`

// whatIfDay is a day of mixed traffic: one response per call.
var whatIfDay = []clitest.ToolCall{
	{ID: "c1", Name: "get_weather", Args: `{"city":"Paris"}`},
	{ID: "c2", Name: "get_weather", Args: `{"city":"Rio de Janeiro"}`},
	{ID: "c3", Name: "get_weather", Args: `{"city":"Buenos Aires"}`},
	{ID: "c4", Name: "get_weather", Args: `{"city":""}`},
	{ID: "c5", Name: "get_weather", Args: `{"city":`},
	{ID: "c6", Name: "transfer_funds", Args: `{"amount":100}`},
	{ID: "c7", Name: "transfer_funds", Args: `{"amount":700}`},
	{ID: "c8", Name: "transfer_funds", Args: `{"amount":5000}`},
	{ID: "c9", Name: "transfer_funds", Args: `{"amount":"many"}`},
	{ID: "c10", Name: "close_account", Args: `{"id":"a1"}`},
	{ID: "c11", Name: "launch_rockets", Args: `{}`},
	{ID: "c12", Name: "transfer_funds", Args: `{"amount":9000}`},
}

// startWhatIfRig is every stage over an embedded NATS server and a real
// redis-server with defs applied, every tool of whatIfOld served.
func startWhatIfRig(t *testing.T, defsYAML string) *clitest.StoryRig {
	t.Helper()
	return clitest.StartRig(t, clitest.Rig{File: "tools.yaml", Tools: defsYAML, Serve: []string{"get_weather", "transfer_funds", "close_account"},
		Result: func(string) string { return `{"done":true}` }})
}

// settled waits until the call of every rid has a status record that is
// final or waits for a human, and returns them by rid.
func settled(t *testing.T, js jetstream.JetStream, rids []string) map[string]whatif.Recorded {
	t.Helper()
	out := map[string]whatif.Recorded{}
	testenv.Eventually(t, 90*time.Second, 100*time.Millisecond, func() error {
		for _, rid := range rids {
			if _, ok := out[rid]; ok {
				continue
			}
			// The stored record, or the result of a call that wrote none
			// (issue 30).
			r, err := records.Reader{JS: js}.Find(context.Background(), call.ID(rid, 0))
			if err != nil {
				return fmt.Errorf("%s: %w", rid, err)
			}
			if r == nil {
				return fmt.Errorf("%s: no record yet", rid)
			}
			data, err := json.Marshal(r)
			if err != nil {
				return err
			}
			rec, err := whatif.DecodeRecord(data)
			if err != nil {
				return err
			}
			if !rec.Status.Terminal() && rec.Status != call.ApprovalRequired {
				return fmt.Errorf("%s is %s", rid, rec.Status)
			}
			out[rid] = rec
		}
		return nil
	})
	return out
}

// whatIfJSON is the part of the --json report the test reads.
type whatIfJSON struct {
	Tools []struct {
		Tool      string `json:"tool"`
		Seen      int    `json:"seen"`
		Unchanged int    `json:"unchanged"`
		Changes   []struct {
			Was, Would string
			Count      int
			Examples   []string
			Refused    bool
		} `json:"changes"`
	} `json:"tools"`
	Skipped map[string]int `json:"not_re_evaluated"`
	Refused int            `json:"refused"`
}

// runWhatIf runs `tools apply --what-if -f FILE --json` against the rig.
func runWhatIf(t *testing.T, r *clitest.StoryRig, defsYAML string, extra ...string) (whatIfJSON, string, int) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(file, []byte(defsYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	args := append([]string{"--nats", r.URL, "--what-if", "-f", file, "--json"}, extra...)
	err := ToolsApply(args, ToolsIO{In: strings.NewReader(""), Out: &out, Err: &errb})
	var rep whatIfJSON
	if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil {
		t.Fatalf("--json printed no JSON (%v, err %v):\n%s\n%s", jerr, err, out.String(), errb.String())
	}
	return rep, out.String(), clitest.Code(err)
}

// lines are a report's counts as comparable lines: "tool seen=N
// unchanged=N" and "tool: was → would (kind and class, no reason) xN".
func (rep whatIfJSON) lines() []string {
	var out []string
	for _, tr := range rep.Tools {
		out = append(out, fmt.Sprintf("%s seen=%d unchanged=%d", tr.Tool, tr.Seen, tr.Unchanged))
		for _, c := range tr.Changes {
			would, _, _ := strings.Cut(c.Would, " (")
			out = append(out, fmt.Sprintf("%s: %s → %s x%d", tr.Tool, c.Was, would, c.Count))
		}
	}
	sort.Strings(out)
	return out
}

// happened are the report lines of what really happened: each call of rids
// as it was recorded (before) against its copy in again published after the
// change was applied (after).
func happened(t *testing.T, rids, again []string, before, after map[string]whatif.Recorded) []string {
	t.Helper()
	want := whatif.NewReport()
	for i, rid := range rids {
		was, now := before[rid], after[again[i]]
		want.Add(was.Tool, was.CallID, was.Fate, was.Status, now.Fate)
	}
	var wantJSON whatIfJSON
	b, _ := json.Marshal(want.JSON())
	if err := json.Unmarshal(b, &wantJSON); err != nil {
		t.Fatal(err)
	}
	return wantJSON.lines()
}

// TestWhatIf_counts_equal_a_real_apply_and_republish records a day of mixed
// traffic through the real pipeline, asks what a tighter schema, a new rule
// and an approval threshold would have done, then applies them for real and
// publishes the same calls again: the report's counts are what happened.
func TestWhatIf_counts_equal_a_real_apply_and_republish(t *testing.T) {
	r := startWhatIfRig(t, whatIfOld)
	var rids []string
	for i, c := range whatIfDay {
		rid := fmt.Sprintf("day-%d", i)
		r.Publish(t, rid, c)
		rids = append(rids, rid)
	}
	before := settled(t, r.JS, rids)

	rep, text, exit := runWhatIf(t, r, whatIfNew)
	if exit != exitWhatIfRefused || rep.Refused == 0 {
		t.Fatalf("exit %d, refused %d: want %d and some refused\n%s", exit, rep.Refused, exitWhatIfRefused, text)
	}
	if len(rep.Skipped) != 0 {
		t.Errorf("not re-evaluated %v, want every call compared\n%s", rep.Skipped, text)
	}

	// The change, for real: the same calls again under the new definitions.
	clitest.ApplyTools(t, r.JS, "tools.yaml", whatIfNew)
	untilGatesFollow(t, r, // validate, business and policy
		probe{clitest.ToolCall{ID: "p1", Name: "get_weather", Args: `{"city":"Rio de Janeiro"}`}, call.SchemaInvalid},
		probe{clitest.ToolCall{ID: "p2", Name: "transfer_funds", Args: `{"amount":5000}`}, call.BusinessInvalid},
		probe{clitest.ToolCall{ID: "p3", Name: "transfer_funds", Args: `{"amount":700}`}, call.ApprovalRequired})
	var again []string
	for i, c := range whatIfDay {
		rid := fmt.Sprintf("again-%d", i)
		r.Publish(t, rid, c)
		again = append(again, rid)
	}
	after := settled(t, r.JS, again)
	got, exp := rep.lines(), happened(t, rids, again, before, after)
	if strings.Join(got, "\n") != strings.Join(exp, "\n") {
		t.Fatalf("what-if counts differ from a real apply and republish:\n got %q\nwant %q\nreport:\n%s", got, exp, text)
	}
	// The lines the change must show, by name.
	for _, w := range []string{
		"get_weather: executed → would go to repair: schema_invalid x2",
		"transfer_funds: executed → would be rejected: business_invalid x2",
		"transfer_funds: executed → would wait for approval x1",
	} {
		if !strings.Contains(strings.Join(got, "\n"), w) {
			t.Errorf("report lacks %q:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

// probe is a call published to learn whether the gates follow an apply,
// and the status (or refusal class) it ends with once they do.
type probe struct {
	call clitest.ToolCall
	want call.Status
}

// untilGatesFollow waits until the gates run the definitions just applied:
// every replica follows the tools bucket on its own watch, so a call
// published the moment after an apply may still meet the old ones (its
// record names the revision it ran under). Each probe — one per gate the
// change touches — is published, on tenant "probe"'s subject so no limit of the
// calls under test is charged, until it ends the new way; the calls under
// test come after.
func untilGatesFollow(t *testing.T, r *clitest.StoryRig, probes ...probe) {
	t.Helper()
	n := 0
	testenv.Eventually(t, 30*time.Second, 20*time.Millisecond, func() error {
		for _, p := range probes {
			n++
			rid := fmt.Sprintf("probe-%d", n)
			r.PublishAs(t, "probe", rid, p.call)
			key := call.Key("probe", rid)
			rec := settled(t, r.JS, []string{key})[key]
			if rec.Fate.Class != p.want && rec.Status != p.want {
				return fmt.Errorf("%s %s ended %s (%s): a gate still runs the old definitions", p.call.Name, p.call.Args, rec.Status, rec.Fate.Class)
			}
		}
		return nil
	})
}

// TestWhatIf_hostile_records_are_counted_not_fatal: a status record that is
// not one, input that no longer decodes and a call whose input is gone are
// each counted and named, the rest compared; a secret in the arguments never
// shows in the report.
func TestWhatIf_hostile_records_are_counted_not_fatal(t *testing.T) {
	r := startWhatIfRig(t, whatIfOld)
	const secret = "sk-live-4f9aQ2mZ8rT1xY7wK3pL6nB0vC5dE"
	r.Publish(t, "h-ok", clitest.ToolCall{ID: "c1", Name: "get_weather", Args: `{"city":"Paris"}`})
	r.Publish(t, "h-secret", clitest.ToolCall{ID: "c2", Name: "get_weather", Args: `{"city":"` + secret + `"}`})
	r.Publish(t, "h-gone", clitest.ToolCall{ID: "c3", Name: "get_weather", Args: `{"city":"Oslo"}`})
	settled(t, r.JS, []string{"h-ok", "h-secret", "h-gone"})
	ctx := context.Background()
	kv, err := r.JS.KeyValue(ctx, streams.BucketCalls)
	if err != nil {
		t.Fatal(err)
	}
	for key, val := range map[string]string{"garbage": "not json {", "empty-record": `{}`, "no-history": `{"call_id":"x","status":"executed"}`} {
		if _, err := kv.Put(ctx, key, []byte(val)); err != nil {
			t.Fatal(err)
		}
	}
	// h-gone's input leaves TOOLGATE_IN, as after 24 hours.
	in, err := r.JS.Stream(ctx, streams.StreamIn)
	if err != nil {
		t.Fatal(err)
	}
	m, err := in.GetLastMsgForSubject(ctx, streams.SubjectInResponse)
	if err != nil || m.Header.Get(streams.HeaderResponseID) != "h-gone" {
		t.Fatalf("last input is not h-gone's: %v", err)
	}
	if err := in.DeleteMsg(ctx, m.Sequence); err != nil {
		t.Fatal(err)
	}
	// Input accumulate refused: no calls, nothing to compare.
	bad := clitest.NatsMsg(streams.SubjectInResponse, []byte("\x00not a response"))
	bad.Header.Set(streams.HeaderProvider, "openai-chat")
	bad.Header.Set(streams.HeaderResponseID, "h-bad")
	if _, err := r.JS.PublishMsg(ctx, bad); err != nil {
		t.Fatal(err)
	}
	rep, text, exit := runWhatIf(t, r, whatIfNew)
	if exit != exitWhatIfRefused {
		t.Fatalf("exit %d, want %d (the long city is refused now)\n%s", exit, exitWhatIfRefused, text)
	}
	if rep.Skipped[whatif.SkipBadRecord] != 3 || rep.Skipped[whatif.SkipAgedOut] != 1 {
		t.Errorf("not re-evaluated %v, want 3 %q and 1 %q\n%s", rep.Skipped, whatif.SkipBadRecord, whatif.SkipAgedOut, text)
	}
	if len(rep.Tools) != 1 || rep.Tools[0].Seen != 2 || rep.Tools[0].Unchanged != 1 {
		t.Errorf("want get_weather 2 seen, 1 unchanged\n%s", text)
	}
	var plain bytes.Buffer
	file := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(file, []byte(whatIfNew), 0o600); err != nil {
		t.Fatal(err)
	}
	err = ToolsApply([]string{"--nats", r.URL, "--what-if", "-f", file, "--tool", "get_weather"}, ToolsIO{In: strings.NewReader(""), Out: &plain, Err: &plain})
	for _, w := range []string{"tool get_weather: 2 seen, 1 unchanged", "executed → would go to repair: schema_invalid", "h-secret-0",
		"not re-evaluated: " + whatif.SkipAgedOut, "unreadable status record", "toolgate status CALL_ID"} {
		if !strings.Contains(plain.String(), w) {
			t.Errorf("report lacks %q:\n%s", w, plain.String())
		}
	}
	if clitest.Code(err) != exitWhatIfRefused {
		t.Errorf("exit %d, want %d", clitest.Code(err), exitWhatIfRefused)
	}
	for _, out := range []string{text, plain.String()} {
		if strings.Contains(out, secret) || strings.Contains(out, secret[8:20]) {
			t.Errorf("the report shows the secret argument:\n%s", out)
		}
	}
	// The tools as applied are untouched: a what-if stores nothing.
	tk, err := r.JS.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		t.Fatal(err)
	}
	e, err := tk.Get(ctx, "transfer_funds")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(e.Value()), "no transfer over 1000") {
		t.Error("--what-if stored the new definition")
	}
}

// A what-if reads as the admin, with the admin's password file; the console
// user's password alone is not enough, as the console user may not read the
// raw input (producers' tokens are in it).
func TestWhatIf_reads_as_the_admin_not_the_console_user(t *testing.T) {
	pw := map[string]string{authz.Admin: "admin-pw-0123456789", authz.Console: "console-pw-0123456789"}
	users, err := natsusers.Users(pw)
	if err != nil {
		t.Fatal(err)
	}
	srv := testenv.RunJetStream(t, func(o *server.Options) { o.Users = users })
	nc, err := nats.Connect(srv.ClientURL(), authz.ClientOptions(authz.Admin, pw[authz.Admin])...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := streams.Ensure(context.Background(), js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, authz.PasswordFile(authz.Console)), []byte(pw[authz.Console]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TOOLGATE_SECRETS", dir)
	t.Setenv("TOOLGATE_NATS_USER", "")
	file := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(file, []byte(whatIfNew), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := ToolsApply([]string{"--nats", srv.ClientURL(), "--what-if", "-f", file}, ToolsIO{In: strings.NewReader(""), Out: &out, Err: &errb}); err == nil {
		t.Fatalf("what-if with only the console user's password ran:\n%s", out.String())
	}
	if err := os.WriteFile(filepath.Join(dir, authz.PasswordFile(authz.Admin)), []byte(pw[authz.Admin]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	err = ToolsApply([]string{"--nats", srv.ClientURL(), "--what-if", "-f", file}, ToolsIO{In: strings.NewReader(""), Out: &out, Err: &errb})
	if err != nil || !strings.Contains(out.String(), "no recorded calls in the window") {
		t.Fatalf("what-if as the admin: %v\n%s\n%s", err, out.String(), errb.String())
	}
}

// whatIfLimits are whatIfOld with two new limits: two weather calls an hour
// and 1000 of amount an hour, per tenant.
const whatIfLimits = whatIfOld + `
limits:
  - {name: weather_per_tenant, tools: [get_weather], window: 1h, count: 2}
  - {name: amount_per_tenant, tools: [transfer_funds], window: 1h, weight: args.amount, max: 1000}
`

// TestWhatIf_limit_counts_equal_a_real_apply_and_republish: the what-if of
// new limits (charged in memory, in time order) counts what the execute
// gate's real counters do when the limits are applied and the same calls
// sent again. Each call is settled before the next is sent, so the order
// they are charged in is the order they were made.
func TestWhatIf_limit_counts_equal_a_real_apply_and_republish(t *testing.T) {
	r := startWhatIfRig(t, whatIfOld)
	day := []clitest.ToolCall{
		{ID: "l1", Name: "get_weather", Args: `{"city":"Paris"}`},
		{ID: "l2", Name: "transfer_funds", Args: `{"amount":400}`},
		{ID: "l3", Name: "get_weather", Args: `{"city":"Lima"}`},
		{ID: "l4", Name: "transfer_funds", Args: `{"amount":400}`},
		{ID: "l5", Name: "get_weather", Args: `{"city":"Oslo"}`},
		{ID: "l6", Name: "transfer_funds", Args: `{"amount":400}`},
		{ID: "l7", Name: "transfer_funds", Args: `{"amount":100}`},
		{ID: "l8", Name: "get_weather", Args: `{"city":"Rome"}`},
	}
	send := func(prefix string) ([]string, map[string]whatif.Recorded) {
		var rids []string
		recs := map[string]whatif.Recorded{}
		for i, c := range day {
			rid := fmt.Sprintf("%s-%d", prefix, i)
			r.Publish(t, rid, c)
			rids = append(rids, rid)
			maps.Copy(recs, settled(t, r.JS, []string{rid}))
		}
		return rids, recs
	}
	rids, before := send("lday")
	rep, text, exit := runWhatIf(t, r, whatIfLimits, "--since", "1h")
	if exit != exitWhatIfRefused || rep.Refused != 3 {
		t.Fatalf("exit %d, refused %d: want %d and 3 refused by the limits\n%s", exit, rep.Refused, exitWhatIfRefused, text)
	}
	clitest.ApplyTools(t, r.JS, "tools.yaml", whatIfLimits)
	untilGatesFollow(t, r, // execute: both limits charged (tenant "probe" has its own counters)
		probe{clitest.ToolCall{ID: "p1", Name: "transfer_funds", Args: `{"amount":1001}`}, call.LimitExceeded},
		probe{clitest.ToolCall{ID: "p2", Name: "get_weather", Args: `{"city":"Bern"}`}, call.LimitExceeded})
	again, after := send("lagain")
	got, exp := rep.lines(), happened(t, rids, again, before, after)
	if strings.Join(got, "\n") != strings.Join(exp, "\n") {
		t.Fatalf("what-if counts differ from a real apply and republish:\n got %q\nwant %q\nreport:\n%s", got, exp, text)
	}
	for _, w := range []string{
		"get_weather: executed → would exceed limit weather_per_tenant x2",
		"transfer_funds: executed → would exceed limit amount_per_tenant x1",
	} {
		if !slices.Contains(got, w) {
			t.Errorf("report lacks %q:\n%s", w, strings.Join(got, "\n"))
		}
	}
}
