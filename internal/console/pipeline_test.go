package console

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/httpingest/pipetest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/toolserver"
	"github.com/toolgate/toolgate/streams"
)

// pipeRig is the real least-privilege pipeline (every stage its own NATS
// user, the example tools and executor) with a console as user console.
type pipeRig struct {
	*rig
	pipe     *pipetest.Pipe
	executed atomic.Int32
}

func newPipeRig(t *testing.T) *pipeRig {
	t.Helper()
	// The producer may assert its roles (issue 28: roles from headers count
	// only from a listed user, on its own subject): the admin's call waits
	// for a human as it would with a verified token.
	p := pipetest.Start(t, pipetest.Options{AssertUsers: []string{authz.Producer}})
	pr := &pipeRig{pipe: p}
	p.Serve(t, func(tool string, c toolserver.Call) (any, error) {
		pr.executed.Add(1)
		return map[string]any{"deleted": true, "tool": tool}, nil
	})
	nc, js := p.Connect(t, authz.Admin)
	cnc, cjs := p.Connect(t, authz.Console)
	pr.rig = rigOn(t, js, nc, cjs, cnc, nil, nil)
	pr.srv.cfg.ReplayWait = 30 * time.Second
	return pr
}

// publish sends an example response as the producer, with roles.
func (pr *pipeRig) publish(file, responseID, roles string) {
	pr.t.Helper()
	body, err := os.ReadFile(filepath.Join(pipetest.Root(), "examples", "responses", file))
	if err != nil {
		pr.t.Fatal(err)
	}
	_, pjs := pr.pipe.Connect(pr.t, authz.Producer)
	m := producer.Meta{Provider: "openai-chat", ResponseID: responseID, Roles: roles, Principal: "ops@example.com"}
	if err := producer.New(pjs).AssertingAs(authz.Producer).PublishResponse(context.Background(), m, body); err != nil {
		pr.t.Fatal(err)
	}
}

// waitFor polls path until its body holds want.
func (pr *pipeRig) waitFor(path, want string) string {
	pr.t.Helper()
	var body string
	testenv.Eventually(pr.t, 60*time.Second, 50*time.Millisecond, func() error {
		_, body = pr.get(path)
		if !strings.Contains(body, want) {
			return fmt.Errorf("%s has no %s yet", path, want)
		}
		return nil
	})
	return body
}

var hashRe = regexp.MustCompile(`data-testid="args-hash">([0-9a-f]{64})<`)

func TestPipeline_approved_from_the_page_executes_once_and_its_timeline_shows_every_gate(t *testing.T) {
	pr := newPipeRig(t)
	pr.publish("delete-account.json", "pl-del", "admin")
	body := pr.waitFor(Prefix+"approvals", `data-call-id="pl-del-0"`)
	if !strings.Contains(body, "cus_9821") || !strings.Contains(body, "ops@example.com") {
		t.Fatalf("the queue shows the arguments in full and the caller:\n%s", body)
	}
	m := hashRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no hash:\n%s", body)
	}
	csrf := pr.csrf(Prefix + "approvals")
	code, body := pr.post(Prefix+"approvals/pl-del-0/approve", url.Values{"csrf": {csrf}, "hash": {m[1]}, "reason": {"ticket 42"}})
	if code != 200 || !strings.Contains(body, `class="flash ok"`) {
		t.Fatalf("approve: %d\n%s", code, body)
	}
	body = pr.waitFor(Prefix+"calls/pl-del-0", `data-testid="call-status" class="status-executed">executed<`)
	if os.Getenv("CONSOLE_DUMP") != "" {
		os.WriteFile(os.Getenv("CONSOLE_DUMP"), []byte(body), 0o644)
	}
	for _, st := range streams.Names() {
		if st == streams.Repair {
			continue // nothing to repair
		}
		if !strings.Contains(body, `data-stage="`+st+`"`) {
			t.Errorf("the timeline has no step of %s", st)
		}
	}
	for _, want := range []string{`data-testid="result"`, "deleted", `data-testid="tool-message"`, "call_del_1", "approved by " + rigName + ": ticket 42"} {
		if !strings.Contains(html.UnescapeString(body), want) {
			t.Errorf("the call page lacks %q", want)
		}
	}
	if strings.Contains(body, "(not kept") && !strings.Contains(body, "cus_9821") {
		t.Errorf("no raw arguments on the page of an approved call:\n%s", body)
	}
	testenv.Eventually(t, 5*time.Second, 50*time.Millisecond, func() error {
		if n := pr.executed.Load(); n != 1 {
			return fmt.Errorf("executed %d times", n)
		}
		return nil
	})
	if code, body := pr.post(Prefix+"approvals/pl-del-0/approve", url.Values{"csrf": {csrf}, "hash": {m[1]}}); code != 409 || !strings.Contains(body, "already approved (by "+rigName+")") {
		t.Fatalf("a second approval: %d\n%s", code, body)
	}
	if n := pr.executed.Load(); n != 1 {
		t.Fatalf("executed %d times", n)
	}
}

var seqRe = regexp.MustCompile(`<tr data-seq="(\d+)">`)

func TestPipeline_replayed_from_the_page_fails_again_and_says_so(t *testing.T) {
	pr := newPipeRig(t)
	pr.publish("schema-invalid-invoice.json", "pl-inv", "")
	body := pr.waitFor(Prefix+"dlq?failure=schema_invalid", "pl-inv-0")
	m := seqRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no letter row:\n%s", body)
	}
	if _, call := pr.get(Prefix + "calls/pl-inv-0"); !strings.Contains(call, `data-testid="error-path"`) || !strings.Contains(call, "YEN") {
		t.Errorf("the call page shows no error path or raw arguments:\n%s", call)
	}
	code, body := pr.post(Prefix+"dlq/replay", url.Values{"csrf": {pr.csrf(Prefix + "dlq")}, "seq": {m[1]}, "mode": {"selected"}})
	if code != 200 {
		t.Fatalf("replay: %d\n%s", code, body)
	}
	page := strings.TrimPrefix(lastURL(t, pr.rig, body), pr.ts.URL)
	body = pr.waitFor(page, `data-testid="replay-summary"`)
	if !strings.Contains(body, `data-testid="sum-replayed">1<`) || !strings.Contains(body, `data-testid="sum-failed-again">1<`) {
		t.Fatalf("summary:\n%s", body)
	}
	pr.waitFor(Prefix+"dlq?failure=schema_invalid&all=1", "superseded")
	if _, call := pr.get(Prefix + "calls/pl-inv-0"); !strings.Contains(call, "replayed from dlq seq "+m[1]+" by "+rigName) {
		t.Errorf("the call's history does not say who replayed it:\n%s", call)
	}
	if pr.executed.Load() != 0 {
		t.Fatal("an invalid call executed")
	}
}
