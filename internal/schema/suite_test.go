package schema

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const suiteDir = "../../testdata/json-schema-test-suite"

// suiteGroup is one schema of the official JSON-Schema-Test-Suite with its cases.
type suiteGroup struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string `json:"description"`
		Data        any    `json:"data"`
		Valid       bool   `json:"valid"`
	} `json:"tests"`
}

// suiteRemotes preloads the suite's remotes/ directory as in-memory resources at
// http://localhost:1234/, which is where the suite says they live.
func suiteRemotes(t *testing.T) map[string]any {
	t.Helper()
	docs := map[string]any{}
	root := filepath.Join(suiteDir, "remotes")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		docs["http://localhost:1234/"+filepath.ToSlash(rel)] = doc
		return nil
	})
	if err != nil {
		t.Fatalf("remotes: %v", err)
	}
	return docs
}

// runSuite runs every required test file of one draft directory (not optional/) and
// returns how many cases passed and how many there were.
func runSuite(t *testing.T, dir string, draft Draft) (passed, total int) {
	t.Helper()
	remotes := suiteRemotes(t)
	files, err := filepath.Glob(filepath.Join(suiteDir, "tests", dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no suite files in %s: %v", dir, err)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var groups []suiteGroup
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.UseNumber()
		if err := dec.Decode(&groups); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, g := range groups {
			total += len(g.Tests)
			sch, err := Compile("suite", g.Schema, WithDefaultDraft(draft), WithoutFormatAssertion(), WithResources(remotes))
			if err != nil {
				t.Errorf("%s: %s: compile: %v", filepath.Base(file), g.Description, err)
				continue
			}
			for _, c := range g.Tests {
				problems := sch.Validate(c.Data)
				if got := len(problems) == 0; got != c.Valid {
					t.Errorf("%s: %s: %s: valid = %v, want %v; problems %v", filepath.Base(file), g.Description, c.Description, got, c.Valid, problems)
					continue
				}
				passed++
			}
		}
	}
	return passed, total
}

func TestSuite_draft7_required_cases_all_pass(t *testing.T) {
	passed, total := runSuite(t, "draft7", Draft7)
	t.Logf("draft7: %d/%d", passed, total)
	if passed != total {
		t.Errorf("draft7: %d of %d cases passed", passed, total)
	}
}

func TestSuite_draft2020_12_required_cases_all_pass(t *testing.T) {
	passed, total := runSuite(t, "draft2020-12", Draft2020)
	t.Logf("draft2020-12: %d/%d", passed, total)
	if passed != total {
		t.Errorf("draft2020-12: %d of %d cases passed", passed, total)
	}
}
