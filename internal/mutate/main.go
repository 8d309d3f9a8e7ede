// Command mutate runs a Go mutation tester (gremlins) over the packages that
// carry toolgate's promises, one package at a time, and prints each
// package's efficacy (killed over killed and lived). A surviving mutant
// either changes behaviour, and a test must kill it, or is equivalent to
// the code (no test can tell them apart), and is listed in equivalent.txt
// with one line of reason; survivors not listed there are printed as new,
// and the command then fails. `make mutate` runs it; it is not part of
// `make test` (a package takes minutes on two cores).
//
//	go run ./internal/mutate -gremlins bin/gremlins [dir ...]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// target is a package to mutate: its directory; only, when set, the one
// file of it to mutate; run, the tests that judge that file.
type target struct {
	Dir  string
	Only string
	Run  string
}

// targets lists the packages that carry the promises, in the order they
// run.
func targets() []target {
	return []target{
		{Dir: "internal/seal"},
		{Dir: "internal/idem"},
		{Dir: "internal/policy"},
		{Dir: "internal/approval"},
		{Dir: "internal/batch"},
		{Dir: "internal/chaos", Only: "check.go", Run: "^TestJudge"}, // the judge, not the harness
		{Dir: "internal/worker"},
		{Dir: "internal/execute"},
	}
}

func main() {
	gremlins := flag.String("gremlins", "gremlins", "the gremlins binary")
	// A mutant's first test run builds the package's dependencies afresh in
	// gremlins' copy of the module; on a busy machine that takes many times
	// the coverage run it is timed against.
	coeff := flag.Int("timeout-coefficient", 30, "a mutant's test run may take this many times the coverage run")
	equivFile := flag.String("equivalent", "internal/mutate/equivalent.txt", "the equivalent mutants, one a line")
	flag.Parse()
	if err := run(*gremlins, *coeff, *equivFile, flag.Args(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(gremlins string, coeff int, equivFile string, dirs []string, out io.Writer) error {
	b, err := os.ReadFile(equivFile)
	if err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	equiv, err := parseEquivalent(b)
	if err != nil {
		return fmt.Errorf("mutate: %s: %w", equivFile, err)
	}
	todo := targets()
	if len(dirs) > 0 {
		todo = nil
		for _, d := range dirs {
			d = strings.TrimSuffix(strings.TrimPrefix(d, "./"), "/")
			i := slices.IndexFunc(targets(), func(t target) bool { return t.Dir == d })
			if i < 0 {
				return fmt.Errorf("mutate: %s is not one of the packages mutate knows (internal/mutate/main.go, targets)", d)
			}
			todo = append(todo, targets()[i])
		}
	}
	newOnes := 0
	for _, t := range todo {
		res, err := unleash(gremlins, coeff, t)
		if err != nil {
			return err
		}
		r, err := judge(t, res, equiv)
		if err != nil {
			return err
		}
		r.print(out)
		newOnes += len(r.New)
	}
	if newOnes > 0 {
		return fmt.Errorf("mutate: %d surviving mutants are new: kill each with a test, or list it in %s with its reason", newOnes, equivFile)
	}
	return nil
}

// results is what gremlins writes with -o.
type results struct {
	Files []struct {
		Name      string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// unleash runs gremlins on t, one worker, and reads its results.
func unleash(gremlins string, coeff int, t target) (results, error) {
	tmp, err := os.CreateTemp("", "mutate-*.json")
	if err != nil {
		return results{}, fmt.Errorf("mutate: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	// No --test-cpu: gremlins v0.6.0 passes it to go test as one argument
	// ("-cpu 1"), go test fails to start, and every mutant counts as killed.
	args := []string{"unleash", "--workers", "1", "--timeout-coefficient", strconv.Itoa(coeff), "-S", "lt", "-o", tmp.Name()}
	ex, err := excludes(t)
	if err != nil {
		return results{}, err
	}
	for _, e := range ex {
		args = append(args, "-E", e)
	}
	cmd := exec.Command(gremlins, append(args, "./"+t.Dir)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.Env = os.Environ()
	if t.Run != "" {
		cmd.Env = append(cmd.Env, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -run="+t.Run))
	}
	fmt.Fprintf(os.Stderr, "== %s: %s %s\n", t.Dir, gremlins, strings.Join(cmd.Args[1:], " "))
	if err := cmd.Run(); err != nil {
		return results{}, fmt.Errorf("mutate: gremlins on %s: %w", t.Dir, err)
	}
	b, err := os.ReadFile(tmp.Name())
	if err != nil {
		return results{}, fmt.Errorf("mutate: %w", err)
	}
	var res results
	if err := json.Unmarshal(b, &res); err != nil {
		return results{}, fmt.Errorf("mutate: gremlins' results for %s: %w", t.Dir, err)
	}
	return res, nil
}

// excludes are gremlins' file exclusions for t (paths relative to t.Dir):
// its subpackages, and with Only every other file.
func excludes(t target) ([]string, error) {
	ex := []string{"/"} // a subdirectory is another package
	if t.Only == "" {
		return ex, nil
	}
	files, err := filepath.Glob(filepath.Join(t.Dir, "*.go"))
	if err != nil {
		return nil, fmt.Errorf("mutate: %w", err)
	}
	var other []string
	for _, f := range files {
		if b := filepath.Base(f); b != t.Only && !strings.HasSuffix(b, "_test.go") {
			other = append(other, regexp.QuoteMeta(b))
		}
	}
	if !slices.Contains(files, filepath.Join(t.Dir, t.Only)) {
		return nil, fmt.Errorf("mutate: %s has no %s", t.Dir, t.Only)
	}
	if len(other) > 0 {
		ex = append(ex, "^(?:"+strings.Join(other, "|")+")$")
	}
	return ex, nil
}

// mutant names a mutation by what it changes rather than where, so an edit
// elsewhere in the file does not unlist it: the file, the mutator, the
// source line (trimmed) and the column within it.
type mutant struct {
	File, Type string
	Col        int
	Text       string
}

func (m mutant) String() string {
	return fmt.Sprintf("%s\t%s\t%d\t%s", m.File, m.Type, m.Col, m.Text)
}

// parseEquivalent reads equivalent.txt: per line "<file> <TAB> <mutator>
// <TAB> <column in the trimmed line> <TAB> <trimmed source line> <TAB>
// <reason>"; blank lines and lines starting with # are skipped. A line
// without a reason is refused.
func parseEquivalent(b []byte) (map[mutant]string, error) {
	out := map[mutant]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 5 || strings.TrimSpace(f[4]) == "" {
			return nil, fmt.Errorf("line %d: want 5 tab-separated fields (file, mutator, column, source line, reason)", n)
		}
		col, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("line %d: column %q", n, f[2])
		}
		out[mutant{File: f[0], Type: f[1], Col: col, Text: f[3]}] = f[4]
	}
	return out, sc.Err()
}

// report is one package's outcome.
type report struct {
	Dir                                            string
	Killed, Lived, NotCovered, TimedOut, NotViable int
	Equivalent                                     int
	New                                            []mutant
}

// judge counts res's mutants of t and sorts the survivors into listed
// equivalents and new ones.
func judge(t target, res results, equiv map[mutant]string) (report, error) {
	r := report{Dir: t.Dir}
	for _, f := range res.Files {
		path := filepath.ToSlash(filepath.Join(t.Dir, f.Name))
		var lines []string
		for _, m := range f.Mutations {
			switch m.Status {
			case "KILLED":
				r.Killed++
			case "NOT COVERED":
				r.NotCovered++
			case "TIMED OUT":
				r.TimedOut++
			case "NOT VIABLE":
				r.NotViable++
			case "LIVED":
				r.Lived++
				if lines == nil {
					b, err := os.ReadFile(path)
					if err != nil {
						return report{}, fmt.Errorf("mutate: %w", err)
					}
					lines = strings.Split(string(b), "\n")
				}
				if m.Line < 1 || m.Line > len(lines) {
					return report{}, errors.New("mutate: gremlins names line " + strconv.Itoa(m.Line) + " of " + path)
				}
				mu := named(path, m.Type, lines[m.Line-1], m.Column)
				if _, ok := equiv[mu]; ok {
					r.Equivalent++
				} else {
					r.New = append(r.New, mu)
				}
			}
		}
	}
	return r, nil
}

// named is the mutant of mutator typ at column col (1-based, in bytes) of
// source line src in file.
func named(file, typ, src string, col int) mutant {
	text := strings.TrimSpace(src)
	indent := len(src) - len(strings.TrimLeft(src, " \t"))
	return mutant{File: file, Type: typ, Col: col - indent, Text: text}
}

func (r report) print(w io.Writer) {
	eff := func(killed, lived int) string {
		if killed+lived == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(killed)/float64(killed+lived))
	}
	fmt.Fprintf(w, "%-18s killed %d, lived %d (%d listed equivalent, %d new), not covered %d, timed out %d, not viable %d; efficacy %s, %s without the equivalent\n",
		r.Dir, r.Killed, r.Lived, r.Equivalent, len(r.New), r.NotCovered, r.TimedOut, r.NotViable,
		eff(r.Killed, r.Lived), eff(r.Killed, r.Lived-r.Equivalent))
	for _, m := range r.New {
		fmt.Fprintf(w, "  NEW %s\n", m)
	}
}
