package tools

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// toolsRig is an embedded nats-server without authentication and a
// directory for tool files; run runs a tools subcommand against it.
type toolsRig struct {
	t   *testing.T
	url string
	dir string
}

func newToolsRig(t *testing.T) *toolsRig {
	t.Helper()
	t.Setenv("TOOLGATE_SECRETS", t.TempDir()) // no generated password: an open server
	t.Setenv("TOOLGATE_EXECUTOR_GROUPS", "")
	return &toolsRig{t: t, url: testenv.RunJetStream(t).ClientURL(), dir: t.TempDir()}
}

// file writes a tools file and returns its path.
func (r *toolsRig) file(name, content string) string {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// run runs `toolgate tools ARGS --nats URL` with stdin; it returns stdout,
// stderr and the error.
func (r *toolsRig) run(stdin string, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	err := toolsWith(append(args, "--nats", r.url), ToolsIO{In: strings.NewReader(stdin), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), err
}

func (r *toolsRig) mustRun(stdin string, args ...string) (string, string) {
	r.t.Helper()
	out, errOut, err := r.run(stdin, args...)
	if err != nil {
		r.t.Fatalf("tools %v: %v\n%s%s", args, err, out, errOut)
	}
	return out, errOut
}

// mcpTools is an MCP tools/list result as a server returns it: no policy.
const mcpTools = `{"jsonrpc":"2.0","id":1,"result":{"tools":[
  {"name":"get_weather","inputSchema":{"type":"object","properties":{"city":{"type":"string"}}}},
  {"name":"delete_file","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}]}}`

func TestToolsApply_tools_without_policy_are_warned_of_and_a_policy_file_gives_them_one(t *testing.T) {
	r := newToolsRig(t)
	tools := r.file("mcp.json", mcpTools)
	out, warn := r.mustRun("", "apply", "-f", tools)
	for _, name := range []string{"get_weather", "delete_file"} {
		if !strings.Contains(warn, "warning: tool "+name+" has no policy: every call will be denied") || !strings.Contains(warn, "--policy") {
			t.Errorf("no warning that %s has no policy, or no way to give one:\n%s", name, warn)
		}
	}
	ls, _ := r.mustRun("", "ls")
	if !regexp.MustCompile(`get_weather\s+1\s+none: every call denied\s+-\s+nats toolgate\.exec\.get_weather`).MatchString(ls) {
		t.Errorf("tools ls does not say get_weather is denied:\n%s", ls)
	}

	policies := r.file("policies.yaml", `
policies:
  get_weather: {risk: read}
  delete_file: {risk: irreversible, allow: "'admin' in roles"}
`)
	t.Setenv("TOOLGATE_IDENTITY_ISSUER", "https://issuer.example") // roles can be verified: no warning of delete_file's (issue 28)
	out, warn = r.mustRun("", "apply", "-f", tools, "--policy", policies)
	if warn != "" {
		t.Errorf("warnings although every tool has a policy now:\n%s", warn)
	}
	if !strings.Contains(out, "tool get_weather changed (policy), revision 3") {
		t.Errorf("report does not say the policy changed:\n%s", out)
	}
	ls, _ = r.mustRun("", "ls")
	for _, re := range []string{
		`NAME\s+REVISION\s+RISK\s+APPROVAL\s+EXECUTOR`,
		`get_weather\s+3\s+read\s+no\s+nats toolgate\.exec\.get_weather`,
		`delete_file\s+4\s+irreversible\s+required\s+nats toolgate\.exec\.delete_file`,
	} {
		if !regexp.MustCompile(re).MatchString(ls) {
			t.Errorf("tools ls lacks %s:\n%s", re, ls)
		}
	}
}

func TestToolsApply_reports_each_tool_and_an_identical_reapply_keeps_the_revision(t *testing.T) {
	r := newToolsRig(t)
	two := r.file("tools.yaml", `
tools:
  - {name: get_weather, input_schema: {type: object}, policy: {risk: read}}
  - {name: get_time, input_schema: {type: object}, policy: {risk: read}}
`)
	out, _ := r.mustRun("", "apply", "-f", two)
	if want := "tool get_weather added, revision 1\ntool get_time added, revision 2\napplied " + two + ": 2 added, 0 changed, 0 unchanged, 0 removed\n"; out != want {
		t.Fatalf("first apply:\n%s\nwant:\n%s", out, want)
	}
	out, _ = r.mustRun("", "apply", "-f", two)
	if want := "tool get_weather unchanged, revision 1\ntool get_time unchanged, revision 2\napplied " + two + ": 0 added, 0 changed, 2 unchanged, 0 removed\n"; out != want {
		t.Fatalf("identical re-apply:\n%s\nwant:\n%s", out, want)
	}
	one := r.file("one.yaml", "tools: [{name: get_weather, input_schema: {type: object}, policy: {risk: write}}]\n")
	out, _ = r.mustRun("", "apply", "-f", one)
	if !strings.Contains(out, "tool get_weather changed (policy), revision 3\n") || !strings.Contains(out, "tool get_time kept: registered, not in "+one+" (--prune removes it), revision 2\n") || !strings.HasSuffix(out, ": 0 added, 1 changed, 0 unchanged, 0 removed, 1 kept\n") {
		t.Fatalf("apply of one tool without --prune:\n%s", out)
	}
	out, _ = r.mustRun("", "apply", "-f", one, "--prune")
	if !strings.Contains(out, "tool get_time removed (not in "+one+"; --prune)\n") || !strings.HasSuffix(out, ": 0 added, 0 changed, 1 unchanged, 1 removed\n") {
		t.Fatalf("--prune did not report what it deleted:\n%s", out)
	}
	if ls, _ := r.mustRun("", "ls"); strings.Contains(ls, "get_time") {
		t.Fatalf("get_time still listed after --prune:\n%s", ls)
	}
}

func TestToolsApply_dash_reads_standard_input(t *testing.T) {
	r := newToolsRig(t)
	out, _ := r.mustRun("tools: [{name: get_weather, input_schema: {type: object}, policy: {risk: read}}]\n", "apply", "-f", "-")
	if !strings.Contains(out, "tool get_weather added, revision 1\napplied stdin: 1 added") {
		t.Fatalf("apply -f -:\n%s", out)
	}
	_, _, err := r.run("tools: [{name: get_weather}]\n", "apply", "-f", "-")
	if err == nil || !strings.HasPrefix(err.Error(), "stdin: tool get_weather: input_schema: required") {
		t.Fatalf("a broken definition on stdin: %v, want an error naming stdin", err)
	}
	if _, _, err := r.run("", "apply", "-f", "-", "--policy", "-"); !errors.Is(err, cmdutil.ErrUsage) {
		t.Fatalf("-f - --policy -: %v, want a usage error", err)
	}
}

func TestToolsApply_warns_of_tools_that_no_executor_group_serves(t *testing.T) {
	r := newToolsRig(t)
	tools := r.file("tools.yaml", `
tools:
  - {name: get_weather, input_schema: {type: object}, policy: {risk: read}}
  - {name: refund, input_schema: {type: object}, policy: {risk: write}}
  - {name: post_hook, input_schema: {type: object}, policy: {risk: write}, executor: {type: http, url: "http://127.0.0.1:1/x"}}
`)
	_, warn := r.mustRun("", "apply", "-f", tools, "--executor-groups", "example=get_weather")
	if !strings.Contains(warn, "warning: tool refund is in no executor group (groups: example): no executor may serve toolgate.exec.refund") || !strings.Contains(warn, "'example=get_weather,refund'") {
		t.Errorf("no warning for refund, or no fix shown:\n%s", warn)
	}
	if strings.Contains(warn, "get_weather is in no") || strings.Contains(warn, "post_hook") {
		t.Errorf("warned of a served tool or of an HTTP one:\n%s", warn)
	}
	// Without groups (flag or TOOLGATE_EXECUTOR_GROUPS) the CLI cannot know
	// those of the toolgate up it talks to: no guess.
	if _, warn := r.mustRun("", "apply", "-f", tools); warn != "" {
		t.Errorf("warned without knowing the groups:\n%s", warn)
	}
	if _, _, err := r.run("", "apply", "-f", tools, "--executor-groups", "nogroup"); !errors.Is(err, cmdutil.ErrUsage) {
		t.Fatalf("a malformed --executor-groups: %v, want a usage error", err)
	}
}

func TestTools_each_subcommand_has_its_own_help_and_flags(t *testing.T) {
	for _, c := range []struct {
		sub        string
		want, lack []string
	}{
		{"apply", []string{"toolgate tools apply -f FILE|-", "-f string", "-policy string", "-prune", "-executor-groups", "-nats"}, nil},
		{"ls", []string{"toolgate tools ls [--nats URL]", "-nats"}, []string{"-prune", "-f string", "-policy"}},
		{"show", []string{"toolgate tools show NAME [--nats URL]", "-nats"}, []string{"-prune", "-f string", "-policy"}},
	} {
		t.Run(c.sub, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := toolsWith([]string{c.sub, "--help"}, ToolsIO{In: strings.NewReader(""), Out: &out, Err: &errOut})
			if !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("--help: %v, want flag.ErrHelp (exit 0)", err)
			}
			help := out.String() + errOut.String()
			for _, w := range c.want {
				if !strings.Contains(help, w) {
					t.Errorf("help lacks %q:\n%s", w, help)
				}
			}
			for _, l := range c.lack {
				if strings.Contains(help, l) {
					t.Errorf("help shows another subcommand's flag %q:\n%s", l, help)
				}
			}
		})
	}
	io := ToolsIO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	if err := toolsWith(nil, io); !errors.Is(err, cmdutil.ErrUsage) {
		t.Errorf("tools without a subcommand: %v, want a usage error", err)
	}
	if err := toolsWith([]string{"rm"}, io); !errors.Is(err, cmdutil.ErrUsage) {
		t.Errorf("tools rm: %v, want a usage error", err)
	}
	if err := toolsWith([]string{"ls", "--prune"}, io); !errors.Is(err, cmdutil.ErrUsage) {
		t.Errorf("tools ls --prune: %v, want a usage error", err)
	}
}

func TestToolsShow_names_a_missing_tool(t *testing.T) {
	r := newToolsRig(t)
	r.mustRun("tools: [{name: get_weather, input_schema: {type: object}, policy: {risk: read}}]\n", "apply", "-f", "-")
	out, _ := r.mustRun("", "show", "get_weather")
	if !strings.HasPrefix(out, "# revision 1\n{") || !strings.Contains(out, `"risk": "read"`) {
		t.Fatalf("show:\n%s", out)
	}
	if _, _, err := r.run("", "show", "get_wether"); err == nil || !strings.Contains(err.Error(), "no tool get_wether is registered") {
		t.Fatalf("show of a missing tool: %v", err)
	}
}

// TestToolsApply_warns_of_policies_on_roles_nobody_is_granted: issue 28.
// Without an identity issuer or users allowed to assert identity, no
// caller is granted a role, so a policy on roles denies every call; apply
// says so on the terminal (stderr), naming the tools, and is silent where
// the deployment verifies roles.
func TestToolsApply_warns_of_policies_on_roles_nobody_is_granted(t *testing.T) {
	r := newToolsRig(t)
	t.Setenv("TOOLGATE_IDENTITY_ISSUER", "")
	t.Setenv("TOOLGATE_IDENTITY_ASSERT_USERS", "")
	tools := r.file("tools.yaml", `
tools:
  - {name: get_weather, input_schema: {type: object}, policy: {risk: read}}
  - {name: delete_file, input_schema: {type: object}, policy: {risk: irreversible, allow: "'admin' in roles"}}
`)
	_, warn := r.mustRun("", "apply", "-f", tools)
	if !strings.Contains(warn, "warning: the policy of delete_file names roles") || strings.Contains(warn, "get_weather") || !strings.Contains(warn, "--identity-assert-users") {
		t.Fatalf("want a warning naming delete_file only, and how roles can be granted:\n%s", warn)
	}
	t.Setenv("TOOLGATE_IDENTITY_ASSERT_USERS", "producer")
	if _, warn := r.mustRun("", "apply", "-f", tools); warn != "" {
		t.Fatalf("warnings where a user may assert roles:\n%s", warn)
	}
}
