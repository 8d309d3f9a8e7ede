package tools

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// maxToolsFile bounds what apply reads from a file or standard input.
const maxToolsFile = 16 << 20

// ToolsApply loads a tools file (and a policy file), stores what changed and
// reports every tool: added, changed, unchanged, removed or kept, then warns
// of tools whose calls cannot succeed. Warnings do not change the exit code.
func ToolsApply(args []string, tio ToolsIO) error {
	fs, url := toolsFlags("apply", tio)
	file := fs.String("f", "", "tool definitions: a file, or - for standard input (YAML 1.2 or JSON; toolgate's form, an OpenAI tools array, Anthropic tools or an MCP tools/list result)")
	polFile := fs.String("policy", "", "policy file for tools whose definitions have none (an imported OpenAI or MCP file): policies: {TOOL: {risk: read|write|irreversible, allow: CEL, approval: BOOL, dry_run: BOOL}}")
	prune := fs.Bool("prune", false, "delete registered tools that the file does not define")
	groups := fs.String("executor-groups", os.Getenv("TOOLGATE_EXECUTOR_GROUPS"), "the executor groups of the toolgate up (or deploy/) applied to, as given to it (TOOLGATE_EXECUTOR_GROUPS): warn of tools no group may serve; unset, not checked")
	wf := addWhatIfFlags(fs) // tools_whatif.go
	shadowOn := fs.Bool("shadow", false, "store the definitions as the shadow revision beside the live ones: every call of their tools is also decided by it, which never acts; see toolgate tools shadow report (tools_shadow.go)")
	promote := fs.Bool("promote", false, "make the shadow revision live (as toolgate tools shadow promote); takes no -f")
	ops, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *promote && (*file != "" || *shadowOn || *wf.on):
		return cmdutil.UsageError("tools apply: --promote makes the stored shadow live and takes no -f, --shadow or --what-if")
	case *promote:
		return shadowPromote(*url, tio)
	case *shadowOn && (*wf.on || *prune):
		return cmdutil.UsageError("tools apply: --shadow cannot be combined with --what-if or --prune (a shadow overlays the live tools it names)")
	case len(ops) > 0:
		return cmdutil.UsageError("tools apply: unexpected %q: the file goes after -f", ops[0])
	case *file == "":
		return cmdutil.UsageError("tools apply: -f FILE is required (-f - reads standard input)")
	case *file == "-" && *polFile == "-":
		return cmdutil.UsageError("tools apply: -f - and --policy - cannot both read standard input")
	}
	var gs []authz.Group
	if *groups != "" {
		if gs, err = authz.ParseGroups(*groups); err != nil {
			return cmdutil.UsageError("tools apply: --executor-groups: %v", err)
		}
	}
	defs, name, err := loadTools(tio.In, *file, *polFile)
	if err != nil {
		return err
	}
	if *wf.on {
		return toolsWhatIf(defs, *url, wf, tio)
	}
	if *shadowOn {
		return toolsShadowApply(defs, name, *url, tio)
	}
	nc, js, err := cmdutil.Connect(*url)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := cmdutil.Timeout()
	defer cancel()
	if err := streams.Ensure(ctx, js, streams.DefaultSettings()); err != nil {
		return err
	}
	kv, err := js.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		return err
	}
	changes, err := registry.Sync(ctx, kv, name, defs, *prune)
	printChanges(tio.Out, name, changes, err == nil)
	if err != nil {
		return err
	}
	live, err := coverApplied(nc, defs, changes, tio.Out) // tools_apply_cover.go
	if err != nil {
		return err
	}
	for _, w := range applyWarnings(defs, gs, *groups != "" && !live) {
		fmt.Fprintln(tio.Err, "toolgate: warning: "+w)
	}
	for _, w := range roleWarnings(defs, os.Getenv) { // tools_apply_roles.go
		fmt.Fprintln(tio.Err, "toolgate: warning: "+w)
	}
	return nil
}

// loadTools reads the tools file ("-": in) and gives its tools the
// policies of polFile. name is the file as errors and the report call it.
func loadTools(in io.Reader, file, polFile string) (defs []tool.Definition, name string, err error) {
	data, name, err := readToolsInput(in, file)
	if err != nil {
		return nil, name, err
	}
	if defs, err = tool.Load(name, data); err != nil {
		return nil, name, err
	}
	if polFile == "" {
		return defs, name, nil
	}
	pdata, pname, err := readToolsInput(in, polFile)
	if err != nil {
		return nil, name, err
	}
	ps, err := tool.LoadPolicies(pname, pdata)
	if err != nil {
		return nil, name, err
	}
	return defs, name, ps.Apply(pname, defs)
}

// readToolsInput reads file, or in for "-", up to maxToolsFile bytes.
func readToolsInput(in io.Reader, file string) ([]byte, string, error) {
	name := file
	if file == "-" {
		name = "stdin"
	} else {
		f, err := os.Open(file)
		if err != nil {
			return nil, name, err
		}
		defer f.Close()
		in = f
	}
	data, err := io.ReadAll(io.LimitReader(in, maxToolsFile+1))
	if err != nil {
		return nil, name, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxToolsFile {
		return nil, name, fmt.Errorf("%s: larger than %d MiB; a tools file is not that big", name, maxToolsFile>>20)
	}
	return data, name, nil
}

// printChanges reports each tool and a summary line; complete is false when
// Sync stopped at an error, which then follows.
func printChanges(w io.Writer, file string, changes []registry.Change, complete bool) {
	counts := map[registry.Action]int{}
	for _, c := range changes {
		counts[c.Action]++
		switch c.Action {
		case registry.Changed:
			fmt.Fprintf(w, "tool %s changed (%s), revision %d\n", c.Name, strings.Join(c.Fields, ", "), c.Revision)
		case registry.Removed:
			fmt.Fprintf(w, "tool %s removed (not in %s; --prune)\n", c.Name, file)
		case registry.Kept:
			fmt.Fprintf(w, "tool %s kept: registered, not in %s (--prune removes it), revision %d\n", c.Name, file, c.Revision)
		default:
			fmt.Fprintf(w, "tool %s %s, revision %d\n", c.Name, c.Action, c.Revision)
		}
	}
	var parts []string
	for _, a := range []registry.Action{registry.Added, registry.Changed, registry.Unchanged, registry.Removed, registry.Kept} {
		if n := counts[a]; n > 0 || a != registry.Kept {
			parts = append(parts, fmt.Sprintf("%d %s", n, a))
		}
	}
	verb := "applied"
	if !complete {
		verb = "stopped applying"
	}
	fmt.Fprintf(w, "%s %s: %s\n", verb, file, strings.Join(parts, ", "))
}

// applyWarnings are the tools of defs whose calls cannot succeed: without a
// policy every call is denied; with checkGroups, a NATS tool that no
// executor group lists has nobody allowed to serve it.
func applyWarnings(defs []tool.Definition, groups []authz.Group, checkGroups bool) []string {
	var out []string
	for _, d := range defs {
		if d.Policy == nil {
			out = append(out, fmt.Sprintf("tool %s has no policy: every call will be denied; give it one with policy: {risk: read|write|irreversible} beside its definition, or in a file given with --policy", d.Name))
		}
	}
	if checkGroups {
		out = append(out, unservedTools(defs, groups)...)
	}
	return out
}

// unservedTools warns of the NATS-executed tools of defs that no executor
// group lists: under least privilege no executor may subscribe to their
// subject, so their approved calls find nobody. toolgate up can call it
// with the groups it runs.
func unservedTools(defs []tool.Definition, groups []authz.Group) []string {
	served := map[string]bool{}
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
		for _, t := range g.Tools {
			served[t] = true
		}
	}
	list := strings.Join(names, ", ")
	if list == "" {
		list = "none"
	}
	var out []string
	for _, d := range defs {
		if d.Executor.Type == "http" || served[d.Name] {
			continue
		}
		subject := d.Executor.Subject
		if subject == "" {
			subject = streams.Exec(d.Name)
		}
		out = append(out, fmt.Sprintf("tool %s is in no executor group (groups: %s): no executor may serve %s, so its calls cannot run; add it to --executor-groups of toolgate up (TOOLGATE_EXECUTOR_GROUPS), e.g. %s", d.Name, list, subject, exampleGroups(groups, d.Name)))
	}
	return out
}

// exampleGroups is groups with tool added to the first, as the flag is
// written.
func exampleGroups(groups []authz.Group, tool string) string {
	if len(groups) == 0 {
		return "'" + authz.ExampleGroup + "=" + tool + "'"
	}
	var parts []string
	for i, g := range groups {
		ts := g.Tools
		if i == 0 {
			ts = append(append([]string(nil), ts...), tool)
		}
		parts = append(parts, g.Name+"="+strings.Join(ts, ","))
	}
	return "'" + strings.Join(parts, ";") + "'"
}
