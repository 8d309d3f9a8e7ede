package doccheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRepository_pages_have_no_dead_links: every relative link of
// README.md, CONTRIBUTING.md and docs/**/*.md reaches a file, and every
// #anchor a heading of its page.
func TestRepository_pages_have_no_dead_links(t *testing.T) {
	root := filepath.Join("..", "..")
	pages, err := Pages(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pages, "docs/reference/README.md") {
		t.Fatalf("pages %v lack docs/reference/README.md: Pages no longer walks docs/", pages)
	}
	problems, err := Check(root, pages)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("dead link: %s", p)
	}
}

func TestSlug_is_GitHubs_anchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Public contract":                        "public-contract",
		"`toolgate dlq ls`":                      "toolgate-dlq-ls",
		"Trust: who can do what, per credential": "trust-who-can-do-what-per-credential",
		"Redis (Sentinel / Cluster)":             "redis-sentinel--cluster",
		"A — B":                                  "a--b",
		"[Helm](deploy/helm) chart, v2.1":        "helm-chart-v21",
		"snake_case and **bold**":                "snake_case-and-bold",
		"Überblick":                              "überblick",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestAnchors_number_repeated_headings_and_skip_code(t *testing.T) {
	a := Anchors("# Setup\n\n## Setup\n\n```\n# not a heading\n```\n\nTitle\n=====\n<a name=\"here\"></a>\n")
	for _, want := range []string{"setup", "setup-1", "title", "here"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Errorf("a # line inside a code fence made an anchor")
	}
}

// TestCheck_finds_a_dead_file_and_a_dead_anchor: the checker itself fails
// on what it should (a page of its own in a temporary root).
func TestCheck_finds_a_dead_file_and_a_dead_anchor(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/a.md", "# A\n\n## Two words\n\n[ok](b.md#b) [ok](#two-words) [ok](../README.md) [web](https://x.test/#y)\n[dead](missing.md) [dead anchor](b.md#nope) [dead here](#three)\n`[code](gone.md)`\n")
	write("docs/b.md", "# B\n")
	write("README.md", "[a](docs/a.md#a)\n\n```\n[fenced](gone.md)\n```\n")
	problems, err := Check(root, []string{"README.md", "docs/a.md"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Target)
	}
	want := []string{"missing.md", "b.md#nope", "#three"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("dead links %q, want %q", got, want)
	}
}
