package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReference_pages_are_fresh: every page of docs/reference/ made by
// internal/gen is committed as the code renders it now, so a flag, a
// variable, a metric, a status or a subject changed without `make
// generate` fails here.
func TestReference_pages_are_fresh(t *testing.T) {
	files, err := Docs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if stale := Stale("../..", files); len(stale) > 0 {
		t.Fatalf("stale: run make generate\n\t%s", strings.Join(stale, "\n\t"))
	}
}

// TestMetricsPage_lists_every_metric_the_source_declares: a metric declared
// in internal/metrics (a Name: of its options, or a NewDesc) that the page
// lacks — one the gathering in doc_metrics.go never made a series of —
// fails here, so the page cannot fall behind the registry silently.
func TestMetricsPage_lists_every_metric_the_source_declares(t *testing.T) {
	page, err := metricsPage("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "internal", "metrics")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	declared := regexp.MustCompile(`(?:Name:\s*|NewDesc\(\s*|counter\(\s*)"([a-z_:]+)"`)
	n := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range declared.FindAllStringSubmatch(string(src), -1) {
			n++
			if !strings.Contains(page, "| `"+m[1]+"` |") {
				t.Errorf("%s declares %s, which metrics.md does not list: make doc_metrics.go give it a series", e.Name(), m[1])
			}
		}
	}
	if n < 10 {
		t.Fatalf("found %d metric declarations in internal/metrics: the pattern no longer matches the source", n)
	}
}

// TestEnvReads_finds_each_reader_and_the_flag_it_defaults: a literal or a
// constant passed to env, os.Getenv or stage.EnvOr is found, with the flag
// it is the default of; test-only variables and other strings are not.
func TestEnvReads_finds_each_reader_and_the_flag_it_defaults(t *testing.T) {
	root := t.TempDir()
	src := `package x

const fileVar = "TOOLGATE_FROM_CONST"

func f(fs *flag.FlagSet, getenv func(string) string) {
	fs.String("listen", env("TOOLGATE_LISTEN_X", "127.0.0.1:1"), "where")
	fs.Bool("ensure", def("TOOLGATE_ENSURE_X", "true") == "true", "ensure")
	_ = stage.EnvOr(getenv, "TOOLGATE_ENVOR_X", "d")
	_ = os.Getenv(fileVar)
	_ = os.Getenv("TOOLGATE_TEST_HOOK")
	_ = fmt.Sprint("TOOLGATE_NOT_READ")
}
`
	if err := os.MkdirAll(filepath.Join(root, "internal", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "internal", "x", "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	reads, err := envReads(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []envRead{
		{"TOOLGATE_LISTEN_X", "internal/x", "--listen", `"127.0.0.1:1"`},
		{"TOOLGATE_ENSURE_X", "internal/x", "--ensure", `"true"`},
		{"TOOLGATE_ENVOR_X", "internal/x", "", `"d"`},
		{"TOOLGATE_FROM_CONST", "internal/x", "", ""},
	}
	if len(reads) != len(want) {
		t.Fatalf("reads %+v, want %+v", reads, want)
	}
	for i := range want {
		if reads[i] != want[i] {
			t.Errorf("read %d: %+v, want %+v", i, reads[i], want[i])
		}
	}
}
