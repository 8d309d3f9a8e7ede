package arch

import "testing"

// TestWire_links_only_the_standard_library: pkg/wire is the contract every
// producer and executor compiles in, so everything it links, not only what
// it imports directly, is the standard library.
func TestWire_links_only_the_standard_library(t *testing.T) {
	for _, pkg := range goList(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./pkg/wire") {
		if pkg != "" && pkg != publicModule+"wire" {
			t.Errorf("pkg/wire links %s", pkg)
		}
	}
}
