package doccheck

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Pages are the checked pages, relative to the module root: README.md,
// CONTRIBUTING.md and every Markdown file under docs/.
func Pages(root string) ([]string, error) {
	pages := []string{"README.md", "CONTRIBUTING.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			pages = append(pages, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(pages[2:])
	return pages, err
}

// Problem is one dead link: the page and line it is on, the target, and
// why it is dead.
type Problem struct {
	Page   string
	Line   int
	Target string
	Why    string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.Page, p.Line, p.Target, p.Why)
}

// Check returns the dead links of pages (paths from root): a relative
// target that is no file or directory under root, or an #anchor that no
// heading (or explicit anchor) of its Markdown page makes. Links out of
// the repository (https:, mailto:) are not followed.
func Check(root string, pages []string) ([]Problem, error) {
	var out []Problem
	anchors := map[string]map[string]bool{} // page -> its anchors, read once
	anchorsOf := func(page string) (map[string]bool, error) {
		if a, ok := anchors[page]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			return nil, err
		}
		anchors[page] = Anchors(string(b))
		return anchors[page], nil
	}
	for _, page := range pages {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			return nil, err
		}
		for _, l := range Links(string(b)) {
			if l.Target == "" || External(l.Target) {
				continue
			}
			bad := func(why string) { out = append(out, Problem{page, l.Line, l.Target, why}) }
			target, anchor, _ := strings.Cut(l.Target, "#")
			target, _, _ = strings.Cut(target, "?")
			if t, err := url.PathUnescape(target); err == nil {
				target = t
			}
			dest := page
			if target != "" {
				if strings.HasPrefix(target, "/") {
					dest = path.Clean(strings.TrimPrefix(target, "/"))
				} else {
					dest = path.Join(path.Dir(page), target)
				}
				if dest == ".." || strings.HasPrefix(dest, "../") {
					bad("leaves the repository")
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
					bad("no such file")
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			a, err := anchorsOf(dest)
			if err != nil {
				return nil, err
			}
			if u, err := url.PathUnescape(anchor); err == nil {
				anchor = u
			}
			if !a[strings.ToLower(anchor)] && !a[anchor] {
				bad("no heading makes #" + anchor + " in " + dest)
			}
		}
	}
	return out, nil
}
