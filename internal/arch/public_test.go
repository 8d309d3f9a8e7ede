package arch

import (
	"os/exec"
	"strings"
	"testing"
)

// publicModule is the import path prefix of this module's public packages.
const publicModule = "github.com/toolgate/toolgate/pkg/"

// heavy names what a client must never link: toolgate's internals, the
// rule and schema engines, YAML, the NATS server.
func heavy(pkg string) bool {
	for _, s := range []string{"toolgate/toolgate/internal/", "cel.dev/", "google/cel-go", "santhosh-tekuri/jsonschema", "yaml", "nats-io/nats-server"} {
		if strings.Contains(pkg, s) {
			return true
		}
	}
	return false
}

// goList runs `go list` from the module root with a -f template and returns
// its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list %s: %v %s", strings.Join(args, " "), err, msg)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestPublic_packages_import_only_wire_and_nats: pkg/wire imports the
// standard library only; every other public package imports only pkg/wire,
// nats.go (with micro and jetstream) and the standard library, so a
// producer or an executor stays a small NATS client (what they link:
// TestPublic_packages_link_nothing_heavy).
func TestPublic_packages_import_only_wire_and_nats(t *testing.T) {
	lines := goList(t, "-f", "{{.ImportPath}}|{{join .Imports \" \"}}", "./pkg/...")
	if len(lines) < 3 {
		t.Fatalf("go list ./pkg/... gave %d packages, want at least wire, toolserver, producer: %q", len(lines), lines)
	}
	for _, l := range lines {
		pkg, imports, _ := strings.Cut(l, "|")
		for _, imp := range strings.Fields(imports) {
			std := !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".")
			ok := std
			if pkg != publicModule+"wire" {
				switch imp {
				case publicModule + "wire", "github.com/nats-io/nats.go", "github.com/nats-io/nats.go/micro", "github.com/nats-io/nats.go/jetstream":
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
}

// TestExecutorExample_links_no_cel_jsonschema_yaml: the example executor, a
// tool author's program on pkg/toolserver, links none of the gates' engines.
func TestExecutorExample_links_no_cel_jsonschema_yaml(t *testing.T) {
	deps := moduleGraph(t)[module+"examples/executor"].deps
	found := false
	for _, dep := range deps {
		if heavy(dep) {
			t.Errorf("examples/executor links %s", dep)
		}
		found = found || dep == publicModule+"toolserver"
	}
	if !found {
		t.Fatalf("examples/executor does not link pkg/toolserver: %d deps", len(deps))
	}
}
