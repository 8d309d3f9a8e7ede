package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/pkg/toolserver"

	"github.com/toolgate/toolgate/internal/cli/clitest"
	"github.com/toolgate/toolgate/internal/cli/cmdutil"
	"github.com/toolgate/toolgate/internal/cli/publish"
)

// Before, a tool applied to a running toolgate up was stored (exit 0) and
// no executor could serve it: the warning that up must restart with
// --executor-groups went only to up's log, and the executor's subscription
// was refused with a permissions violation. Now up makes the tool a group
// of its own when it is applied and reloads its NATS users in place:
// apply says which user serves it, an executor connects as that user at
// once, and a call runs, with no restart; connections made before the
// reload (the example executor here) keep serving.
func TestUp_a_tool_applied_later_gets_an_executor_group_without_a_restart(t *testing.T) {
	u := clitest.StartUp(t)
	serve := func(user, group, tool string, f toolserver.Func) *clitest.Denials {
		t.Helper()
		d := &clitest.Denials{}
		nc, err := nats.Connect(u.URL, append(authz.ClientOptions(user, u.Password(t, user)), nats.ErrorHandler(d.Handler))...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		srv, err := toolserver.New(nc, group, "1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Handle(tool, f); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		return d
	}
	weather := serve(authz.Executor, authz.ExampleGroup, "get_weather", func(context.Context, toolserver.Call) (any, error) {
		return map[string]any{"conditions": "clear"}, nil
	})

	file := clitest.WriteFile(t, "mytool.yaml", `tools:
  - name: convert_currency
    input_schema:
      type: object
      properties:
        amount: {type: number}
        to: {type: string, enum: [EUR, USD]}
      required: [amount, to]
    policy: {risk: read}
`)
	var out, errOut bytes.Buffer
	start := time.Now()
	if err := ToolsApply([]string{"--nats", u.URL, "-f", file}, ToolsIO{Out: &out, Err: &errOut}); err != nil {
		t.Fatalf("tools apply: %v\n%s%s", err, out.String(), errOut.String())
	}
	t.Logf("tools apply with a new group took %v:\n%s%s", time.Since(start), out.String(), errOut.String())
	if want := "executor group convert-currency created for tool convert_currency: its executor connects as NATS user executor-convert-currency"; !strings.Contains(out.String(), want) {
		t.Errorf("apply does not say who serves the tool, want %q in:\n%s", want, out.String())
	}

	var mu sync.Mutex
	var got []string
	conv := serve("executor-convert-currency", "convert-currency", "convert_currency", func(_ context.Context, c toolserver.Call) (any, error) {
		mu.Lock()
		got = append(got, string(c.Arguments))
		mu.Unlock()
		return map[string]any{"amount": 92.5, "currency": "EUR"}, nil
	})

	rid := fmt.Sprintf("groups-%d", time.Now().UnixNano())
	text, code := clitest.RunCmd(t, clitest.ChatBody(rid, "convert_currency", `{"amount": 100, "to": "EUR"}`), publish.Publish, "--nats", u.URL, "--provider", "openai-chat", "--response-id", rid, "--wait", "20s", "-")
	if code != 0 || !strings.Contains(text, `"currency":"EUR"`) {
		t.Errorf("the new tool's call: exit %d, want its result:\n%s", code, text)
	}
	mu.Lock()
	if len(got) != 1 || !json.Valid([]byte(got[0])) {
		t.Errorf("the new executor ran %d calls (%q), want 1", len(got), got)
	}
	mu.Unlock()

	// The example executor, connected before the reload, still serves.
	text, code = clitest.RunCmd(t, clitest.ChatBody(rid+"-w", "get_weather", `{"city": "Oslo"}`), publish.Publish, "--nats", u.URL, "--provider", "openai-chat", "--response-id", rid+"-w", "--wait", "20s", "-")
	if code != 0 || !strings.Contains(text, `"conditions":"clear"`) {
		t.Errorf("a call of an executor connected before the reload: exit %d:\n%s", code, text)
	}
	for name, d := range map[string]*clitest.Denials{"convert_currency": conv, "get_weather": weather} {
		d.Mu.Lock()
		if len(d.Errs) > 0 {
			t.Errorf("the %s executor was refused: %v", name, d.Errs)
		}
		d.Mu.Unlock()
	}

	// Applied again, unchanged: nothing new to say, and still exit 0.
	out.Reset()
	if err := ToolsApply([]string{"--nats", u.URL, "-f", file}, ToolsIO{Out: &out, Err: &errOut}); err != nil || strings.Contains(out.String(), "executor group") {
		t.Errorf("an unchanged re-apply: %v\n%s", err, out.String())
	}
}

// tools apply against a server where no toolgate up manages the groups (a
// deployment's nats-server, up --insecure) goes on as before; against an
// up that could not make a group, it fails, saying what to run, instead of
// exiting 0 with a tool nobody may serve.
func TestCoverApplied_no_up_is_not_live_and_a_failed_group_fails_the_apply(t *testing.T) {
	srv := testenv.RunJetStream(t)
	nc, _ := testenv.Connect(t, srv)
	defs, err := tool.Load("t.yaml", []byte(clitest.ToolsYAML("convert_currency", "http_lookup")))
	if err != nil {
		t.Fatal(err)
	}
	changes := []registry.Change{{Name: "convert_currency", Action: registry.Added}}
	var out bytes.Buffer
	if live, err := coverApplied(nc, defs, changes, &out); live || err != nil || out.Len() != 0 {
		t.Errorf("no responder: live %v, err %v, printed %q; want not live, no error, nothing", live, err, out.String())
	}
	sub, err := nc.Subscribe(coverSubject, func(m *nats.Msg) {
		var req coverRequest
		_ = json.Unmarshal(m.Data, &req)
		if len(req.Tools) != 1 || req.Tools[0] != "convert_currency" {
			_ = m.Respond([]byte(`{"error":"asked for the wrong tools"}`))
			return
		}
		_ = m.Respond([]byte(`{"error":"up: reload the NATS users: refused"}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	_, err = coverApplied(nc, defs, changes, &out)
	if err == nil || !strings.Contains(err.Error(), "reload the NATS users: refused") || !strings.Contains(err.Error(), "restart toolgate up with every tool in a group (--executor-groups") {
		t.Errorf("a failed group: err %v, want the cause and what to run", err)
	}
	if code := cmdutil.ExitCode(err); code == 0 {
		t.Errorf("a failed group exits %d", code)
	}
}
