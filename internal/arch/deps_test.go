package arch

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

// module is the import path prefix of this module's packages.
const module = "github.com/toolgate/toolgate/"

// pkgDeps is one package of the module as `go list` sees it: what it imports
// directly and everything it links (transitively).
type pkgDeps struct {
	imports, deps []string
}

// graph is every package of the module with its imports and its transitive
// dependencies, from one `go list` run shared by every test here.
var graph = sync.OnceValues(func() (map[string]pkgDeps, error) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return nil, fmt.Errorf("go list ./...: %v %s", err, msg)
	}
	g := map[string]pkgDeps{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(l, "|", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("go list: unexpected line %q", l)
		}
		g[parts[0]] = pkgDeps{imports: strings.Fields(parts[1]), deps: strings.Fields(parts[2])}
	}
	return g, nil
})

func moduleGraph(t *testing.T) map[string]pkgDeps {
	t.Helper()
	g, err := graph()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g[module+"internal/parse"]; !ok || len(g) < 30 {
		t.Fatalf("go list ./... listed %d packages, without internal/parse", len(g))
	}
	return g
}

// ioKind names what a package must not link to stay a pure core: it says which
// kind of I/O dep is, or "" when dep is none.
func ioKind(dep string) string {
	switch {
	case dep == "net/http":
		return "HTTP"
	case dep == "os/exec":
		return "processes"
	case strings.HasPrefix(dep, "github.com/nats-io/"):
		return "NATS"
	case strings.HasPrefix(dep, "github.com/redis/"):
		return "Redis"
	case strings.HasPrefix(dep, "github.com/modelcontextprotocol/"):
		return "MCP"
	}
	return ""
}

// pureCores are the packages CONTRIBUTING.md lists as pure cores, no I/O:
// the gates' logic, tested without a broker.
func pureCores() []string {
	return []string{"provider", "textcall", "parse", "schema", "rules", "policy", "repair", "result",
		"redact", "canon", "tool", "textdist", "model", "call", "wirejson"}
}

// via names the direct imports of pkg through which it links dep.
func via(g map[string]pkgDeps, pkg, dep string) []string {
	var out []string
	for _, imp := range g[pkg].imports {
		if imp == dep || slices.Contains(g[imp].deps, dep) {
			out = append(out, strings.TrimPrefix(imp, module))
		}
	}
	return out
}

// impure lists what the pure cores link that does I/O, each with the
// direct imports it comes through.
func impure(g map[string]pkgDeps) []string {
	var bad []string
	for _, c := range pureCores() {
		pkg := module + "internal/" + c
		if _, ok := g[pkg]; !ok {
			bad = append(bad, fmt.Sprintf("internal/%s: not a package of the module (update pureCores and CONTRIBUTING.md)", c))
			continue
		}
		for _, dep := range g[pkg].deps {
			if kind := ioKind(dep); kind != "" {
				bad = append(bad, fmt.Sprintf("internal/%s links %s (%s) through %s", c, dep, kind, strings.Join(via(g, pkg, dep), ", ")))
			}
		}
	}
	return bad
}

// TestPure_cores_link_no_io: what CONTRIBUTING.md calls a pure core links
// no HTTP, NATS, Redis, MCP or process code, directly or through anything
// it imports.
func TestPure_cores_link_no_io(t *testing.T) {
	for _, b := range impure(moduleGraph(t)) {
		t.Error(b)
	}
}

// gatePorts are the packages through which internal/gates reaches NATS,
// Redis and executors today: the worker's handler and error types, the
// stage table, and the stores and executors a gate is handed (approvals,
// batches, idempotency keys, executor calls). Until those are interfaces
// of the gates' own, the gates link them, but through nothing else.
func gatePorts() []string {
	return []string{"internal/worker", "streams", "internal/approval", "internal/batch", "internal/idem", "internal/execute"}
}

// gatesIO lists the I/O internal/gates links through a direct import that
// is not one of its ports (a gate that imports internal/ingest, the
// registry or nats.go itself).
func gatesIO(g map[string]pkgDeps) []string {
	pkg := module + "internal/gates"
	var bad []string
	for _, imp := range g[pkg].imports {
		if slices.Contains(gatePorts(), strings.TrimPrefix(imp, module)) {
			continue
		}
		if kind := ioKind(imp); kind != "" {
			bad = append(bad, fmt.Sprintf("internal/gates imports %s (%s)", imp, kind))
			continue
		}
		for _, dep := range g[imp].deps {
			if kind := ioKind(dep); kind != "" {
				bad = append(bad, fmt.Sprintf("internal/gates links %s (%s) through %s", dep, kind, strings.TrimPrefix(imp, module)))
				break
			}
		}
	}
	return bad
}

// TestGates_link_io_only_through_their_ports: internal/gates imports no
// NATS, Redis or HTTP package, and reaches them only through gatePorts.
func TestGates_link_io_only_through_their_ports(t *testing.T) {
	g := moduleGraph(t)
	if len(g[module+"internal/gates"].imports) == 0 {
		t.Fatal("go list gave no imports of internal/gates")
	}
	for _, b := range gatesIO(g) {
		t.Error(b)
	}
}

// heavyLinks lists what each public package (pkg/...) links that a client
// must never carry (heavy: the internals, CEL, JSON Schema, YAML, the NATS
// server).
func heavyLinks(g map[string]pkgDeps) []string {
	var bad []string
	for pkg, p := range g {
		if !strings.HasPrefix(pkg, publicModule) {
			continue
		}
		for _, dep := range p.deps {
			if heavy(dep) {
				bad = append(bad, fmt.Sprintf("%s links %s", strings.TrimPrefix(pkg, module), dep))
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// TestPublic_packages_link_nothing_heavy: everything a public package links,
// not only what it imports, stays out of toolgate's internals and engines.
func TestPublic_packages_link_nothing_heavy(t *testing.T) {
	for _, b := range heavyLinks(moduleGraph(t)) {
		t.Error(b)
	}
}

// TestDependency_rules_catch_what_they_forbid: each rule above, given a
// graph that breaks it, says so (so a rule that stopped checking would be
// seen here, not by a reader).
func TestDependency_rules_catch_what_they_forbid(t *testing.T) {
	g := map[string]pkgDeps{}
	for _, c := range pureCores() {
		g[module+"internal/"+c] = pkgDeps{}
	}
	g[module+"internal/parse"] = pkgDeps{imports: []string{module + "pkg/wire"}, deps: []string{module + "pkg/wire", "net/http"}}
	g[module+"pkg/wire"] = pkgDeps{deps: []string{"net/http"}}
	g[module+"internal/gates"] = pkgDeps{
		imports: []string{module + "internal/worker", module + "internal/ingest", "github.com/nats-io/nats.go"},
	}
	g[module+"internal/worker"] = pkgDeps{deps: []string{"github.com/nats-io/nats.go"}}
	g[module+"internal/ingest"] = pkgDeps{deps: []string{"github.com/nats-io/nats.go/jetstream"}}
	g[module+"pkg/producer"] = pkgDeps{deps: []string{module + "internal/stage"}}

	if got := impure(g); len(got) != 1 || !strings.Contains(got[0], "internal/parse links net/http (HTTP) through pkg/wire") {
		t.Errorf("impure = %q, want internal/parse's HTTP through pkg/wire", got)
	}
	got := gatesIO(g)
	if len(got) != 2 || !strings.Contains(got[0], "through internal/ingest") || !strings.Contains(got[1], "imports github.com/nats-io/nats.go") {
		t.Errorf("gatesIO = %q, want ingest's NATS and nats.go imported (not the worker's)", got)
	}
	if got := heavyLinks(g); len(got) != 1 || got[0] != "pkg/producer links "+module+"internal/stage" {
		t.Errorf("heavyLinks = %q, want pkg/producer's internal/stage", got)
	}
}
