package main

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/streams"
)

// TestGenerated_files_are_fresh: every file derived from the stage table is
// committed as the generator renders it.
func TestGenerated_files_are_fresh(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	if stale := Stale("../..", files); len(stale) > 0 {
		t.Fatalf("stale: run make generate\n\t%s", strings.Join(stale, "\n\t"))
	}
	for _, st := range streams.Names() {
		for _, p := range []string{"deploy/base/stages/" + st + ".yaml", "services/" + st + "/main.go"} {
			if len(files[p]) == 0 {
				t.Errorf("%s is not generated", p)
			}
		}
	}
}
