package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A mutant is named by what it changes, so the equivalent list survives
// edits elsewhere in the file: the same statement moved down and
// re-indented is the same mutant.
func TestNamed_ignores_line_numbers_and_indentation(t *testing.T) {
	a := named("internal/seal/mac.go", "ARITHMETIC_BASE", "\tn := 128 + len(s.Key)", 10)
	b := named("internal/seal/mac.go", "ARITHMETIC_BASE", "\t\t\tn := 128 + len(s.Key)", 12)
	if a != b || a.Col != 9 || a.Text != "n := 128 + len(s.Key)" {
		t.Fatalf("%+v and %+v, want the same mutant at column 9 of the trimmed line", a, b)
	}
	if c := named("internal/seal/mac.go", "ARITHMETIC_BASE", "\tn := 128 + len(s.Key)", 5); c == a {
		t.Fatal("another column named the same mutant")
	}
}

func TestEquivalent_file_lines(t *testing.T) {
	eq, err := parseEquivalent([]byte("# comment\n\ninternal/seal/mac.go\tARITHMETIC_BASE\t9\tn := 128 + len(s.Key)\tcapacity hint\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := mutant{File: "internal/seal/mac.go", Type: "ARITHMETIC_BASE", Col: 9, Text: "n := 128 + len(s.Key)"}
	if eq[m] != "capacity hint" || len(eq) != 1 {
		t.Fatalf("%v", eq)
	}
	for _, bad := range []string{
		"internal/seal/mac.go\tARITHMETIC_BASE\t9\tn := 128\n",    // no reason
		"internal/seal/mac.go\tARITHMETIC_BASE\t9\tn := 128\t \n", // an empty one
		"internal/seal/mac.go\tARITHMETIC_BASE\tnine\tn := 128\tcapacity\n",
	} {
		if _, err := parseEquivalent([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// The checked-in list parses, and each entry still names a line of its
// file, so a stale entry is noticed without running gremlins.
func TestEquivalent_list_names_existing_lines(t *testing.T) {
	b, err := os.ReadFile("equivalent.txt")
	if err != nil {
		t.Fatal(err)
	}
	eq, err := parseEquivalent(b)
	if err != nil {
		t.Fatal(err)
	}
	for m := range eq {
		src, err := os.ReadFile(filepath.Join("../..", m.File))
		if err != nil {
			t.Errorf("%s: %v", m, err)
			continue
		}
		found := false
		for line := range strings.Lines(string(src)) {
			found = found || strings.TrimSpace(line) == m.Text
		}
		if !found || m.Col < 1 || m.Col > len(m.Text) {
			t.Errorf("stale entry: %s (the line is gone or the column is outside it)", m)
		}
	}
}

func TestJudge_counts_and_sorts_survivors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc f(x int) bool {\n\treturn x > 0\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var res results
	if err := json.Unmarshal([]byte(`{"files":[{"file_name":"a.go","mutations":[
		{"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":4,"column":11},
		{"type":"CONDITIONALS_NEGATION","status":"LIVED","line":4,"column":11},
		{"type":"CONDITIONALS_NEGATION","status":"KILLED","line":4,"column":11},
		{"type":"ARITHMETIC_BASE","status":"NOT COVERED","line":4,"column":11},
		{"type":"ARITHMETIC_BASE","status":"TIMED OUT","line":4,"column":11}]}]}`), &res); err != nil {
		t.Fatal(err)
	}
	eq := map[mutant]string{{File: filepath.ToSlash(filepath.Join(dir, "a.go")), Type: "CONDITIONALS_BOUNDARY", Col: 10, Text: "return x > 0"}: "x is never 0"}
	r, err := judge(target{Dir: dir}, res, eq)
	if err != nil {
		t.Fatal(err)
	}
	if r.Killed != 1 || r.Lived != 2 || r.Equivalent != 1 || len(r.New) != 1 || r.NotCovered != 1 || r.TimedOut != 1 || r.New[0].Type != "CONDITIONALS_NEGATION" {
		t.Fatalf("%+v", r)
	}
	var out bytes.Buffer
	r.print(&out)
	if !strings.Contains(out.String(), "efficacy 33.3%, 50.0% without the equivalent") || !strings.Contains(out.String(), "NEW "+r.New[0].String()) {
		t.Fatalf("report:\n%s", out.String())
	}
}

func TestExcludes_keep_one_file_and_no_subpackage(t *testing.T) {
	ex, err := excludes(target{Dir: "../chaos", Only: "check.go"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 2 || ex[0] != "/" || strings.Contains(ex[1], "check") || !strings.Contains(ex[1], `hostile\.go`) {
		t.Fatalf("excludes %q", ex)
	}
	if _, err := excludes(target{Dir: "../chaos", Only: "nothing.go"}); err == nil {
		t.Fatal("a missing file accepted")
	}
}
