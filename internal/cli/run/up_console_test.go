package run

import (
	"context"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/authz"
	webconsole "github.com/toolgate/toolgate/internal/console"
	"github.com/toolgate/toolgate/internal/secrets"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/clitest"
)

// irreversibleTool is delete_customer_account of examples/tools.yaml with
// no role rule: a call of it waits for a human whoever makes it.
const irreversibleTool = `tools:
  - name: delete_customer_account
    description: Permanently deletes a customer account.
    input_schema:
      type: object
      properties:
        customer_id: {type: string, minLength: 1}
        reason: {type: string, minLength: 1}
      required: [customer_id, reason]
      additionalProperties: false
    policy:
      risk: irreversible
`

// Issue 28, "any local process is the operator": on plain toolgate up a
// process with no credentials GETs /console/approvals (the CSRF token and
// the arguments hash in hand), POSTs approve with them, and the waiting
// irreversible call executes. Now the page sends it to the login, the
// POST is refused, and nothing reaches the executor; the operator logging
// in with the token up wrote approves it, for contrast.
func TestUp_console_without_credentials_sees_and_decides_nothing(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.yaml")
	if err := os.WriteFile(tools, []byte(irreversibleTool), 0o600); err != nil {
		t.Fatal(err)
	}
	natsAddr, httpAddr, secretsDir := freeAddr(t), freeAddr(t), filepath.Join(dir, "secrets")
	log := clitest.RunBin(t, httpAddr, []string{"TOOLGATE_SECRETS=", "TOOLGATE_CONSOLE_TOKENS="}, "up", "--listen", natsAddr, "--http", httpAddr, "--ingest-http", "",
		"--data", filepath.Join(dir, "data"), "--secrets", secretsDir, "--tools", tools)
	natsURL, base := "nats://"+natsAddr, "http://"+httpAddr

	// An executor of the tool, counting what reaches it.
	pw, err := secrets.Read(secretsDir, authz.PasswordFile(authz.ExecutorUser(authz.ExampleGroup)))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := nats.Connect(natsURL, authz.ClientOptions(authz.ExecutorUser(authz.ExampleGroup), pw)...)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	var ran atomic.Int32
	if _, err := enc.Subscribe(wire.Exec("delete_customer_account"), func(*nats.Msg) { ran.Add(1) }); err != nil {
		t.Fatal(err)
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}

	publish := exec.Command(clitest.UpBinary(t), "publish", "--nats", natsURL, "--provider", "openai-chat", "--response-id", "anon", "../../../examples/responses/delete-account.json")
	publish.Env = append(os.Environ(), "TOOLGATE_SECRETS="+secretsDir, "TOOLGATE_NATS_USER=")
	if out, err := publish.CombinedOutput(); err != nil {
		t.Fatalf("publish: %v\n%s", err, out)
	}
	apw, err := secrets.Read(secretsDir, authz.PasswordFile(authz.Admin))
	if err != nil {
		t.Fatal(err)
	}
	anc, err := nats.Connect(natsURL, authz.ClientOptions(authz.Admin, apw)...)
	if err != nil {
		t.Fatal(err)
	}
	defer anc.Close()
	js, _ := jetstream.New(anc)
	kv, err := js.KeyValue(context.Background(), streams.BucketApprovals)
	if err != nil {
		t.Fatal(err)
	}
	store := approval.NewStore(kv)
	var rec approval.Record
	testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, func() error {
		rec, _, err = store.Get(context.Background(), "anon-0")
		return err
	})

	// The attack: a plain HTTP client, no credentials, following redirects.
	jar, _ := cookiejar.New(nil)
	anon := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	code, page := getWith(t, anon, base+webconsole.Prefix+"approvals")
	if strings.Contains(page, rec.ArgsHash) || strings.Contains(page, "cus_9821") || !strings.Contains(page, `<form id="login"`) {
		t.Fatalf("GET approvals without credentials: %d, want the login form and no call:\n%s", code, page)
	}
	csrf := ""
	if m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page); m != nil {
		csrf = m[1] // the only CSRF token it can get: the login form's
	}
	for _, decision := range []string{"approve", "deny"} {
		resp, err := anon.PostForm(base+webconsole.Prefix+"approvals/anon-0/"+decision, url.Values{"csrf": {csrf}, "hash": {rec.ArgsHash}, "reason": {"anonymous"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("POST %s without credentials: %d, want 401", decision, resp.StatusCode)
		}
	}
	if got, _, _ := store.Get(context.Background(), "anon-0"); got.State != approval.Pending {
		t.Fatalf("an anonymous POST decided the call: %+v", got)
	}
	if n := ran.Load(); n != 0 {
		t.Fatalf("the call reached its executor %d times without anyone approving", n)
	}

	// Up said where the token is, and never the token.
	roles, _, err := webconsole.LoadTokens(filepath.Join(secretsDir, webconsole.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	for tok := range roles {
		if strings.Contains(log.String(), tok) {
			t.Fatalf("the console token is in up's log:\n%s", log)
		}
	}
	if !strings.Contains(log.String(), filepath.Join(secretsDir, webconsole.TokenFile)) || !strings.Contains(log.String(), base+webconsole.Prefix) {
		t.Fatalf("up's log does not say where to log in and where the token is:\n%s", log)
	}

	// The operator, logged in with the token up wrote, approves.
	op := consoleLogin(t, base, secretsDir)
	_, page = getWith(t, op, base+webconsole.Prefix+"approvals")
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if m == nil || !strings.Contains(page, rec.ArgsHash) {
		t.Fatalf("the operator's approvals page:\n%s", page)
	}
	resp, err := op.PostForm(base+webconsole.Prefix+"approvals/anon-0/approve", url.Values{"csrf": {m[1]}, "hash": {rec.ArgsHash}, "reason": {"checked"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, _, _ := store.Get(context.Background(), "anon-0"); resp.StatusCode != 200 || got.State != approval.Approved || got.By != webconsole.FirstOperator {
		t.Fatalf("the operator's approval: %d, record %+v", resp.StatusCode, got)
	}
	testenv.Eventually(t, 30*time.Second, 50*time.Millisecond, func() error {
		if ran.Load() == 0 {
			return errors.New("the approved call has not reached its executor")
		}
		return nil
	})
}
