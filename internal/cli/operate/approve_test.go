package operate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/clitest"
	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// pendingApproval starts an embedded nats-server with toolgate's streams and
// one call waiting for approval with args; it returns the server URL and the
// approvals store.
func pendingApproval(t *testing.T, id, args string) (string, *approval.Store, jetstream.JetStream) {
	t.Helper()
	t.Setenv("TOOLGATE_SECRETS", t.TempDir()) // no generated password: an open server
	srv := testenv.RunJetStream(t)
	_, js := testenv.Connect(t, srv)
	ctx := context.Background()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, streams.BucketApprovals)
	if err != nil {
		t.Fatal(err)
	}
	store := approval.NewStore(kv)
	e := call.New("resp-1", 0, time.Now())
	e.CallID, e.ToolName, e.RawArguments, e.Arguments, e.Status = id, "delete_customer_account", args, json.RawMessage(args), call.ApprovalRequired
	e.Request.Principal, e.Request.Roles = "alice", []string{"admin"}
	r, err := approval.NewRecord(e, "irreversible", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	return srv.ClientURL(), store, js
}

func stateOf(t *testing.T, store *approval.Store, id string) approval.Record {
	t.Helper()
	r, _, err := store.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// resumed counts the envelopes sent back to the policy gate.
func resumed(t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	st, err := js.Stream(context.Background(), streams.StreamGates)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background(), jetstream.WithSubjectFilter(streams.Gate(streams.Policy)))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

func TestApprove_without_hash_refuses_without_terminal(t *testing.T) {
	url, store, js := pendingApproval(t, "c-1", `{"customer_id":"cus_1"}`)
	// /dev/null (no stdin at all) and a pipe that even answers yes: neither
	// is a human at a terminal.
	for name, stdin := range map[string]*strings.Reader{"dev_null": nil, "pipe_says_yes": strings.NewReader("y\n")} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(clitest.UpBinary(t), "approve", "c-1", "--by", "mallory", "--nats", url)
			if stdin != nil {
				cmd.Stdin = stdin
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("approve without --hash and without a terminal: %v (%s), want exit 1", err, stderr.String())
			}
			for _, want := range []string{"no terminal", "toolgate approvals show c-1", "--hash HASH"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("error %q does not say %q", stderr.String(), want)
				}
			}
			if r := stateOf(t, store, "c-1"); r.State != approval.Pending {
				t.Fatalf("record is %s, want still pending", r.State)
			}
		})
	}
	if n := resumed(t, js); n != 0 {
		t.Fatalf("%d envelopes sent on to the policy gate, want none", n)
	}
}

func TestApprove_shows_arguments_and_hash_and_asks(t *testing.T) {
	// The string argument carries ESC [2J (clear screen) and a C1 CSI: shown
	// escaped, never written raw to the terminal.
	const args = `{"customer_id":"cus_1","reason":"\u001b[2J\u009b31mnothing to see"}`
	url, store, js := pendingApproval(t, "c-1", args)
	hash := approval.ArgsHash(json.RawMessage(args))

	var out bytes.Buffer
	err := decide("approve", approval.Approved, []string{"c-1", "--by", "carol", "--nats", url},
		console{in: strings.NewReader("n\n"), out: &out, terminal: true})
	if err == nil || !strings.Contains(err.Error(), "not approved") {
		t.Fatalf("answered n: %v, want not approved", err)
	}
	shown := out.String()
	for _, want := range []string{"tool       delete_customer_account", "\"customer_id\": \"cus_1\"", "args hash  " + hash, "alice", "approve? [y/N] "} {
		if !strings.Contains(shown, want) {
			t.Errorf("prompt lacks %q:\n%s", want, shown)
		}
	}
	if strings.ContainsAny(shown, "\x1b\u009b") {
		t.Errorf("prompt wrote control characters raw: %q", shown)
	}
	if r := stateOf(t, store, "c-1"); r.State != approval.Pending || resumed(t, js) != 0 {
		t.Fatalf("answered n, yet the record is %s", r.State)
	}

	out.Reset()
	if err := decide("approve", approval.Approved, []string{"c-1", "--by", "carol", "--nats", url},
		console{in: strings.NewReader("yes\n"), out: &out, terminal: true}); err != nil {
		t.Fatal(err)
	}
	r := stateOf(t, store, "c-1")
	if r.State != approval.Approved || r.By != "carol" || r.ArgsHash != hash {
		t.Fatalf("record %s by %s hash %s, want approved by carol for the hash shown %s", r.State, r.By, r.ArgsHash, hash)
	}
	if n := resumed(t, js); n != 1 {
		t.Fatalf("%d envelopes sent on, want 1", n)
	}
}

func TestApprove_with_hash_proceeds_without_terminal_only_for_that_hash(t *testing.T) {
	const args = `{"customer_id":"cus_1"}`
	url, store, _ := pendingApproval(t, "c-1", args)
	hash := approval.ArgsHash(json.RawMessage(args))
	other := approval.ArgsHash(json.RawMessage(`{"customer_id":"cus_6666"}`))
	noTTY := console{in: strings.NewReader(""), out: &bytes.Buffer{}}
	run := func(h string) error {
		return decide("approve", approval.Approved, []string{"c-1", "--by", "carol", "--hash", h, "--nats", url}, noTTY)
	}
	if err := run(hash[:4]); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Fatalf("a 4-digit hash: %v, want refused as too short", err)
	}
	if err := run(other[:16]); !errors.Is(err, approval.ErrChanged) {
		t.Fatalf("another call's hash: %v, want %v", err, approval.ErrChanged)
	}
	if r := stateOf(t, store, "c-1"); r.State != approval.Pending {
		t.Fatalf("record is %s after refused approvals, want pending", r.State)
	}
	// Before, the sha256: prefix toolgate status prints was taken as part
	// of the digits, and the call's own hash was refused as "changed".
	if err := run("sha256:" + hash[:16]); err != nil {
		t.Fatal(err)
	}
	if r := stateOf(t, store, "c-1"); r.State != approval.Approved || r.ArgsHash != hash {
		t.Fatalf("record %s %s, want approved for %s", r.State, r.ArgsHash, hash)
	}
}

func TestDeny_needs_no_terminal(t *testing.T) {
	url, store, _ := pendingApproval(t, "c-1", `{"customer_id":"cus_1"}`)
	if err := decide("deny", approval.Denied, []string{"c-1", "--by", "carol", "--nats", url},
		console{in: strings.NewReader(""), out: &bytes.Buffer{}}); err != nil {
		t.Fatal(err)
	}
	if r := stateOf(t, store, "c-1"); r.State != approval.Denied {
		t.Fatalf("record is %s, want denied", r.State)
	}
}

func TestIsTerminal_pipes_files_and_dev_null_are_not(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, f := range []*os.File{r, null, file} {
		if cmdutil.IsTerminal(f) {
			t.Errorf("%s counts as a terminal", f.Name())
		}
	}
}

func TestPrintable_escapes_what_could_redraw_the_terminal(t *testing.T) {
	for in, want := range map[string]string{
		"call-1\tdelete\n": "call-1\tdelete\n",
		"evil\x1b[2Jid":    `evil\u001b[2Jid`,
		"c1\u009b31m":      `c1\u009b31m`,
		"rtl\u202egnp.exe": `rtl\u202egnp.exe`,
		"kunde_müller":     "kunde_müller",
	} {
		if got := cmdutil.Printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// Issue 29: approve after an expiry said only "already expired" (and "(by
// )"). It says the call expired before a decision, that nothing runs, and
// where its dead letter and story are — asked on a terminal or not.
func TestApprove_after_expiry_says_what_became_of_the_call(t *testing.T) {
	url, store, _ := pendingApproval(t, "c-late", `{"customer_id":"cus_1"}`)
	rec, rev, err := store.Get(context.Background(), "c-late")
	if err != nil {
		t.Fatal(err)
	}
	rec.ExpiresAt = time.Now().Add(-time.Minute)
	if _, err := store.Update(context.Background(), rec, rev); err != nil {
		t.Fatal(err)
	}
	for _, con := range []console{{in: strings.NewReader(""), out: &bytes.Buffer{}}, {in: strings.NewReader("y\n"), out: &bytes.Buffer{}, terminal: true}} {
		args := []string{"c-late", "--by", "carol", "--nats", url}
		if !con.terminal { // with the hash, as a script approves; on a terminal, asked first
			args = append(args, "--hash", rec.ArgsHash[:16])
		}
		err := decide("approve", approval.Approved, args, con)
		if !errors.Is(err, approval.ErrDecided) {
			t.Fatalf("terminal %v: %v, want refused as decided", con.terminal, err)
		}
		for _, want := range []string{"expired at", "before anyone decided", "nothing runs", "toolgate dlq ls --call c-late", "toolgate status c-late"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("terminal %v: %q lacks %q", con.terminal, err, want)
			}
		}
	}
	if r := stateOf(t, store, "c-late"); r.State != approval.Pending {
		t.Fatalf("a late approval decided: %s", r.State)
	}
}
