package arch

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// cliPrefix is where the toolgate command's packages live: one per group
// of commands (publish, operate, tools, run, deploy), their shared helpers
// (cmdutil) and their tests' rigs (clitest).
const cliPrefix = module + "internal/cli/"

// cliImports lists the imports of a command-line package from outside the
// command line (only services/toolgate and internal/cli/... may import one:
// a stage binary or a library that did would link every command), and any
// non-test import of internal/cli/clitest (a test rig: it builds binaries
// and starts servers, never part of a binary).
func cliImports(g map[string]pkgDeps) []string {
	var bad []string
	for pkg, p := range g {
		for _, imp := range p.imports {
			if !strings.HasPrefix(imp, cliPrefix) {
				continue
			}
			switch {
			case imp == cliPrefix+"clitest":
				bad = append(bad, fmt.Sprintf("%s imports the test rig %s", strings.TrimPrefix(pkg, module), strings.TrimPrefix(imp, module)))
			case pkg != module+"services/toolgate" && !strings.HasPrefix(pkg, cliPrefix):
				bad = append(bad, fmt.Sprintf("%s imports %s (only services/toolgate and internal/cli may)", strings.TrimPrefix(pkg, module), strings.TrimPrefix(imp, module)))
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// TestCLI_packages_are_imported_only_by_the_toolgate_command: the command
// line's packages stay out of the stages, the libraries and the public
// packages, and its test rig out of every binary.
func TestCLI_packages_are_imported_only_by_the_toolgate_command(t *testing.T) {
	g := moduleGraph(t)
	if !slices.Contains(g[module+"services/toolgate"].imports, cliPrefix+"cmdutil") {
		t.Fatalf("go list: services/toolgate does not import %scmdutil", cliPrefix)
	}
	for _, b := range cliImports(g) {
		t.Error(b)
	}
}

// TestCLI_rule_catches_what_it_forbids: a stage importing a command's
// package and a command package importing the rig are each named; the
// command importing its packages is not.
func TestCLI_rule_catches_what_it_forbids(t *testing.T) {
	g := map[string]pkgDeps{
		module + "services/toolgate": {imports: []string{cliPrefix + "publish", cliPrefix + "cmdutil"}},
		cliPrefix + "publish":        {imports: []string{cliPrefix + "cmdutil", cliPrefix + "clitest"}},
		module + "services/parse":    {imports: []string{cliPrefix + "cmdutil"}},
		module + "internal/stage":    {imports: []string{module + "streams"}},
		cliPrefix + "clitest":        {imports: []string{cliPrefix + "cmdutil"}},
	}
	got := cliImports(g)
	want := []string{
		"internal/cli/publish imports the test rig internal/cli/clitest",
		"services/parse imports internal/cli/cmdutil (only services/toolgate and internal/cli may)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("cliImports = %q, want %q", got, want)
	}
}
