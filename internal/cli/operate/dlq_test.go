package operate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/internal/records"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/clitest"
	"github.com/toolgate/toolgate/internal/cli/cmdutil"
	"github.com/toolgate/toolgate/internal/cli/tools"
)

// dlqRig is a running `toolgate up` with the example tools and executor,
// and the admin's JetStream.
type dlqRig struct {
	t   *testing.T
	u   *clitest.RunningUp
	js  jetstream.JetStream
	ctx context.Context
}

func startDLQRig(t *testing.T) (*dlqRig, func() int32) {
	t.Helper()
	// No HTTP ingest: its default port may be taken. The admin may assert
	// roles (issue 28), so publish's admin-only calls pass policy.
	u := clitest.StartUp(t, "--ingest-http", "", "--identity-assert-users", authz.Admin)
	runs, _ := clitest.ServeExamples(t, u)
	nc, js, err := cmdutil.Connect(u.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return &dlqRig{t: t, u: u, js: js, ctx: context.Background()}, runs.Load
}

// run runs `toolgate dlq args...` against the rig, stdin in, and returns
// its standard output and error output.
func (r *dlqRig) run(in string, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	err := dlqRun(dlqIO{out: &out, errOut: &errOut, in: strings.NewReader(in)}, append(args, "--nats", r.u.URL))
	return out.String(), errOut.String(), err
}

func (r *dlqRig) mustRun(args ...string) string {
	r.t.Helper()
	out, errOut, err := r.run("", args...)
	if err != nil {
		r.t.Fatalf("dlq %v: %v\n%s%s", args, err, out, errOut)
	}
	return out
}

func (r *dlqRig) publish(rid, tool, args string, roles string) {
	r.t.Helper()
	m := nats.NewMsg(streams.SubjectInResponse)
	m.Header.Set(streams.HeaderProvider, "openai-chat")
	m.Header.Set(streams.HeaderResponseID, rid)
	if roles != "" {
		m.Subject = wire.InAsResponse(authz.Admin)
		m.Header.Set("Toolgate-Roles", roles)
		m.Header.Set("Toolgate-Principal", "alice")
	}
	m.Data = clitest.ChatBody(rid, tool, args)
	if _, err := r.js.PublishMsg(r.ctx, m, jetstream.WithMsgID(rid)); err != nil {
		r.t.Fatal(err)
	}
}

// publishCut publishes a stream that drafts a call and breaks off: the
// producer's connection ended before the provider's terminal event.
func (r *dlqRig) publishCut(rid string) {
	r.t.Helper()
	chunk := fmt.Sprintf(`{"id":%q,"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"ci"}}]}}]}`, rid)
	for i, body := range []string{chunk, ""} {
		m := nats.NewMsg(streams.InStreamPrefix + rid)
		m.Header.Set(streams.HeaderProvider, "openai-chat")
		m.Header.Set(streams.HeaderResponseID, rid)
		m.Header.Set(streams.HeaderSeq, fmt.Sprint(i+1))
		if body == "" {
			m.Header.Set(streams.HeaderEnd, "connection reset")
		}
		m.Data = []byte(body)
		if _, err := r.js.PublishMsg(r.ctx, m); err != nil {
			r.t.Fatal(err)
		}
	}
}

// status waits until callID's status record satisfies ok.
func (r *dlqRig) status(callID string, ok func(call.Status) bool) call.Status {
	r.t.Helper()
	var st call.Status
	testenv.Eventually(r.t, 30*time.Second, 50*time.Millisecond, func() error {
		// The stored record, or the result of a call that wrote none (issue 30).
		rec, err := records.Reader{JS: r.js}.Find(r.ctx, callID)
		if err != nil {
			return err
		}
		if rec == nil {
			return fmt.Errorf("no record of %s yet", callID)
		}
		if st = rec.Status; !ok(st) {
			return fmt.Errorf("%s is %s", callID, st)
		}
		return nil
	})
	return st
}

func (r *dlqRig) letters(n int) []dlq.Letter {
	r.t.Helper()
	var ls []dlq.Letter
	testenv.Eventually(r.t, 30*time.Second, 50*time.Millisecond, func() error {
		var err error
		if ls, err = dlq.List(r.ctx, r.js, dlq.Filter{}); err != nil {
			return err
		}
		if len(ls) != n {
			return fmt.Errorf("%d dead letters, want %d", len(ls), n)
		}
		return nil
	})
	return ls
}

func byCall(ls []dlq.Letter) map[string]dlq.Letter {
	m := map[string]dlq.Letter{}
	for _, l := range ls {
		m[l.CallID] = l
	}
	return m
}

// row is the line of `dlq ls` output for seq.
func row(out string, seq uint64) string {
	for _, line := range strings.Split(out, "\n") {
		// SEQ  MM-DD HH:MM:SS  STAGE ...: not a footer that starts with a count
		if f := strings.Fields(line); len(f) >= 7 && f[0] == fmt.Sprint(seq) && len(f[1]) == 5 && f[1][2] == '-' {
			return line
		}
	}
	return ""
}

// applyYen lets create_invoice take YEN: the fix an operator applies
// before replaying.
func (r *dlqRig) applyYen() {
	r.t.Helper()
	b, err := os.ReadFile("../../../examples/tools.yaml")
	if err != nil {
		r.t.Fatal(err)
	}
	fixed := strings.Replace(string(b), "enum: [USD, EUR, GBP]", "enum: [USD, EUR, GBP, YEN]", 1)
	path := filepath.Join(r.t.TempDir(), "tools.yaml")
	if err := os.WriteFile(path, []byte(fixed), 0o600); err != nil {
		r.t.Fatal(err)
	}
	if err := tools.Tools([]string{"apply", "-f", path, "--nats", r.u.URL}); err != nil {
		r.t.Fatal(err)
	}
	// The fix has reached the validate gate once a fresh YEN call passes.
	failed := 0
	testenv.Eventually(r.t, 30*time.Second, 100*time.Millisecond, func() error {
		rid := fmt.Sprintf("probe-%d", time.Now().UnixNano())
		r.publish(rid, "create_invoice", yenInvoice, "")
		if st := r.status(rid+"-0", call.Status.Terminal); st != call.Executed {
			failed++
			return fmt.Errorf("probe ended %s", st)
		}
		return nil
	})
	// Each probe that met the old schema left a dead letter, not the
	// test's: once all are stored, remove them.
	var probes []dlq.Letter
	testenv.Eventually(r.t, 30*time.Second, 50*time.Millisecond, func() error {
		ls, err := dlq.List(r.ctx, r.js, dlq.Filter{})
		if err != nil {
			return err
		}
		probes = probes[:0]
		for _, l := range ls {
			if strings.HasPrefix(l.CallID, "probe-") {
				probes = append(probes, l)
			}
		}
		if len(probes) != failed {
			return fmt.Errorf("%d probe letters, want %d", len(probes), failed)
		}
		return nil
	})
	if _, err := dlq.Purge(r.ctx, r.js, probes); err != nil {
		r.t.Fatal(err)
	}
}

const yenInvoice = `{"customer_id":"cus_9821","currency":"YEN","line_items":[{"sku":"PRO-SEAT","quantity":3,"price_cents":4900}]}`

func TestDLQ_ls_show_and_replay_say_where_each_letter_failed_and_what_became_of_it(t *testing.T) {
	r, runs := startDLQRig(t)
	r.publish("badjson", "get_weather", `{"city":`, "")
	r.publish("yen", "create_invoice", yenInvoice, "")
	r.publish("del", "delete_customer_account", `{"customer_id":"cus_1","reason":"closing"}`, "admin")
	r.publishCut("cut")
	r.status("del-0", func(s call.Status) bool { return s == call.ApprovalRequired })
	if err := Deny([]string{"del-0", "--by", "bob", "--reason", "wrong customer", "--nats", r.u.URL}); err != nil {
		t.Fatal(err)
	}
	ls := byCall(r.letters(4))

	// Point 14: each letter shows the stage that failed it, the one its
	// history and its Toolgate-Stage header name, where replay sends it.
	out := r.mustRun("ls")
	for id, want := range map[string]string{"badjson-0": "parse", "yen-0": "validate", "del-0": "policy", "cut-0": "accumulate"} {
		l, ok := ls[id]
		if !ok {
			t.Fatalf("no dead letter of %s: %v", id, ls)
		}
		failedAt, _ := streams.FailedAt(*l.Envelope)
		if l.Stage != want || l.Header.Get(streams.HeaderStage) != want || failedAt != want {
			t.Errorf("%s: stage %s, header %s, history %s; want %s", id, l.Stage, l.Header.Get(streams.HeaderStage), failedAt, want)
		}
		if line := row(out, l.Seq); !strings.Contains(line, " "+want+" ") || !strings.Contains(line, "not replayed") {
			t.Errorf("%s: ls row %q, want stage %s and fate 'not replayed'", id, line, want)
		}
	}

	// Point 15: show tells what works for letters replay does not take.
	show := r.mustRun("show", fmt.Sprint(ls["cut-0"].Seq))
	if !strings.Contains(show, "not replayable") || !strings.Contains(show, "producer must send the response again") || strings.Contains(show, "replay: toolgate dlq replay") {
		t.Errorf("show of transport_incomplete:\n%s", show)
	}
	show = r.mustRun("show", fmt.Sprint(ls["del-0"].Seq))
	if !strings.Contains(show, "human denied") || !strings.Contains(show, "--failure approval_denied") {
		t.Errorf("show of approval_denied:\n%s", show)
	}
	show = r.mustRun("show", fmt.Sprint(ls["yen-0"].Seq))
	if !strings.Contains(show, fmt.Sprintf("replay: toolgate dlq replay --seq %d", ls["yen-0"].Seq)) || !strings.Contains(show, "(enters validate)") {
		t.Errorf("show of schema_invalid:\n%s", show)
	}

	r.applyYen()
	before := runs()
	var stdout, progress bytes.Buffer
	err := dlqRun(dlqIO{out: &stdout, errOut: &progress, in: strings.NewReader("")}, []string{"replay", "--wait", "30s", "--nats", r.u.URL})
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, stdout.String())
	}
	sum := stdout.String()
	if got := summaryRow(sum); got != "4 2 1 1 0 2" {
		t.Errorf("summary, want 4 selected, 2 replayed, 1 executed, 1 failed again, 2 skipped:\n%s", sum)
	}
	if !strings.Contains(sum, "del-0: a human denied it") {
		t.Errorf("the denied call is not said to be skipped:\n%s", sum)
	}
	if strings.Contains(progress.String(), "\r") || !strings.Contains(progress.String(), "replaying 2/2\n") {
		t.Errorf("progress on a non-terminal: %q", progress.String())
	}
	if st := r.status("del-0", call.Status.Terminal); st != call.ApprovalDenied {
		t.Errorf("the denied call is now %s", st)
	}
	if n := runs() - before; n != 1 {
		t.Errorf("the replay ran %d calls, want 1 (yen)", n)
	}

	// The executed letter is settled and the first badjson letter is
	// superseded by its new one: both hidden unless --all.
	all := r.letters(5)
	out = r.mustRun("ls")
	if row(out, ls["yen-0"].Seq) != "" || row(out, ls["badjson-0"].Seq) != "" || !strings.Contains(out, "2 settled letter(s) hidden") {
		t.Errorf("ls after the replay:\n%s", out)
	}
	if line := row(out, all[4].Seq); !strings.Contains(line, "badjson-0") || !strings.Contains(line, "not replayed") {
		t.Errorf("the new badjson letter: %q\n%s", line, out)
	}
	out = r.mustRun("ls", "--all")
	if line := row(out, ls["yen-0"].Seq); !strings.Contains(line, "replayed → executed") {
		t.Errorf("ls --all: yen row %q\n%s", line, out)
	}
	if line := row(out, ls["badjson-0"].Seq); !strings.Contains(line, fmt.Sprintf("superseded by seq %d", all[4].Seq)) {
		t.Errorf("ls --all: first badjson row %q\n%s", line, out)
	}

	// Replaying the executed letter again changes nothing and says so.
	before = runs()
	sum = r.mustRun("replay", "--seq", fmt.Sprint(ls["yen-0"].Seq), "--wait", "5s")
	if got := summaryRow(sum); got != "1 0 0 0 0 1" || !strings.Contains(sum, "skipped 1 settled letter(s)") {
		t.Errorf("second replay of the executed letter:\n%s", sum)
	}
	if n := runs() - before; n != 0 {
		t.Errorf("the second replay ran %d calls", n)
	}

	out = r.mustRun("ls", "--limit", "1")
	if strings.Count(out, "\n") < 2 || !strings.Contains(out, "1 dead letter(s)") || !strings.Contains(out, "2 more match beyond --limit") {
		t.Errorf("ls --limit 1:\n%s", out)
	}
}

func TestDLQ_unknown_stage_or_failure_is_a_usage_error_naming_the_valid_ones(t *testing.T) {
	r := lettersRig(t)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"ls", "--stage", "valdate"}, []string{`--stage "valdate" is not a stage`, "accumulate, parse, validate, business, policy, repair, execute"}},
		{[]string{"replay", "--failure", "schema_invalidd"}, []string{`--failure "schema_invalidd" is not a failure class`, "schema_invalid", "approval_denied", "stored now: schema_invalid"}},
		{[]string{"purge", "--limit", "-1"}, []string{"--limit -1"}},
		{[]string{"replay", "--to-stage", "repair"}, []string{"--to-stage"}},
		{[]string{"ls", "--bogus"}, []string{"bogus"}},
		{[]string{"show"}, []string{"want one stream sequence"}},
		{[]string{"show", "seven"}, []string{`"seven" is not a stream sequence`}},
		{[]string{"ls", "--since", "yesterday"}, []string{"--since", "neither a duration"}},
		{[]string{"frob"}, []string{`unknown subcommand "frob"`, "dlq ls"}},
	} {
		_, _, err := r.run("", c.args...)
		if !errors.Is(err, cmdutil.ErrUsage) || cmdutil.ExitCode(err) != 2 {
			t.Errorf("%v: error %v, want a usage error (exit 2)", c.args, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q does not say %q", c.args, err, w)
			}
		}
	}
}

// summaryRow is the counts line of replay's summary, one space apart:
// selected, replayed, now executed, failed again, still pending, skipped.
func summaryRow(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "SELECTED") && i+1 < len(lines) {
			return strings.Join(strings.Fields(lines[i+1]), " ")
		}
	}
	return ""
}

func TestDLQ_purge_asks_and_deletes_at_most_limit(t *testing.T) {
	r := lettersRig(t)
	out, _, err := r.run("no\n", "purge", "--limit", "2")
	if err == nil || !strings.Contains(out, "This deletes 2 dead letter(s)") {
		t.Fatalf("unconfirmed purge: %v\n%s", err, out)
	}
	if n := len(r.letters(3)); n != 3 {
		t.Fatalf("an unconfirmed purge deleted letters: %d left", n)
	}
	out, _, err = r.run("yes\n", "purge", "--limit", "2")
	if err != nil || !strings.Contains(out, "purged 2 dead letter(s)") || !strings.Contains(out, "1 more match beyond --limit") {
		t.Fatalf("confirmed purge: %v\n%s", err, out)
	}
	if left := r.letters(1); left[0].CallID != "r3-0" {
		t.Fatalf("purge took %v, want the two oldest", left)
	}
}

// lettersRig is an embedded server with toolgate's streams and three
// schema_invalid dead letters (r1-0, r2-0, r3-0) as the validate gate
// writes them.
func lettersRig(t *testing.T) *dlqRig {
	t.Helper()
	t.Setenv("TOOLGATE_SECRETS", t.TempDir()) // no generated password: an open server
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	r := &dlqRig{t: t, u: &clitest.RunningUp{URL: srv.ClientURL()}, js: js, ctx: context.Background()}
	if err := streams.Ensure(r.ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	for _, rid := range []string{"r1", "r2", "r3"} {
		e := call.New(rid, 0, time.Now())
		e.Provider, e.ToolName, e.RawArguments = "openai-chat", "get_weather", `{"city":7}`
		for _, m := range []struct {
			stage string
			to    call.Status
		}{{"parse", call.Parsed}, {"validate", call.SchemaInvalid}, {"repair", call.Failed}} {
			if err := e.Move(m.stage, m.to, time.Now(), "/city: want string"); err != nil {
				t.Fatal(err)
			}
		}
		e.Failure = call.SchemaInvalid
		body, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		m := nats.NewMsg(streams.DLQ(streams.Validate, string(call.SchemaInvalid)))
		m.Header.Set(streams.HeaderCallID, e.CallID)
		m.Header.Set(streams.HeaderStage, streams.Validate)
		m.Data = body
		if _, err := js.PublishMsg(r.ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	return r
}
