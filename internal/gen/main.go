// Command gen writes the files derived from the stage table
// (streams.Table): each stage's Kubernetes manifest and
// services/<stage>/main.go, the base kustomization's list, the HPA overlay,
// docker-compose.yml, the Dockerfile's binaries, the NATS users of
// deploy/ (their passwords are never generated here: `toolgate secrets
// init`), internal/seal's list of the gates execute demands a seal of
// (seal imports no NATS code, so it cannot read the table itself), and the
// reference pages of docs/reference/ (docs.go; cli.md is `toolgate help
// --markdown`'s). `make generate` runs it with -w;
// without -w it lists the stale files and fails.
// TestGenerated_files_are_fresh keeps them current.
package main

import (
	"bytes"
	"embed"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/seal"
	"github.com/toolgate/toolgate/streams"
)

//go:embed templates/*.tmpl
var templates embed.FS

// stageData is what a per-stage template sees.
type stageData struct {
	Name, Stream, PasswordVar string
	// Store: the stage keeps idempotency keys (execute), so it needs Redis.
	Store bool
	// SealKeys are the seal key files it mounts (seal.Needed); Exec: it
	// signs executor requests (execute).
	SealKeys []string
	Exec     bool
}

// data is what the whole-file templates see.
type data struct {
	Names  []string
	Stages []stageData
	// SealKeys are every sealing stage's key file.
	SealKeys []string
	// PasswordVars are the NATS users' password variables (authz.Names);
	// Executor is the example executor's user.
	PasswordVars []string
	Executor     string
}

// wholeFiles are the generated files that list every stage or user.
func wholeFiles() map[string]string {
	return map[string]string{
		"deploy/overlays/hpa/hpa.yaml":           "hpa.yaml.tmpl",
		"deploy/overlays/hpa/kustomization.yaml": "hpa-kustomization.yaml.tmpl",
		"deploy/base/kustomization.yaml":         "base-kustomization.yaml.tmpl",
		"docker-compose.yml":                     "docker-compose.yml.tmpl",
		"Dockerfile":                             "Dockerfile.tmpl",
	}
}

// Files renders every generated file, keyed by its path from the module
// root.
func Files() (map[string][]byte, error) {
	t, err := template.New("gen").Funcs(template.FuncMap{"join": strings.Join, "bind": bindFunc}).ParseFS(templates, "templates/*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	files := map[string][]byte{}
	all := data{Names: streams.Names(), SealKeys: sealFiles(seal.Needed(streams.Names())), Executor: authz.Executor}
	for _, u := range authz.Names() {
		all.PasswordVars = append(all.PasswordVars, authz.PasswordVar(u))
	}
	for _, st := range streams.Table() {
		d := stageData{Name: st.Name, Stream: st.Stream, PasswordVar: authz.PasswordVar(st.Name)}
		d.Store = slices.ContainsFunc(st.Buckets, func(b streams.Bucket) bool { return b.Name == streams.BucketIdempotency })
		d.SealKeys, d.Exec = sealFiles(seal.Needed([]string{st.Name})), st.Name == streams.Execute
		all.Stages = append(all.Stages, d)
		for path, tmpl := range map[string]string{
			"deploy/base/stages/" + st.Name + ".yaml": "stage.yaml.tmpl",
			"services/" + st.Name + "/main.go":        "main.go.tmpl",
		} {
			var b bytes.Buffer
			if err := t.ExecuteTemplate(&b, tmpl, d); err != nil {
				return nil, fmt.Errorf("gen: %s: %w", path, err)
			}
			files[path] = b.Bytes()
		}
	}
	for path, tmpl := range wholeFiles() {
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, tmpl, all); err != nil {
			return nil, fmt.Errorf("gen: %s: %w", path, err)
		}
		files[path] = b.Bytes()
	}
	accounts, err := authz.Render()
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	files["deploy/base/nats-accounts.conf"] = []byte(accounts)
	sd, err := sealStages()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "seal_stages.go.tmpl", sd); err != nil {
		return nil, fmt.Errorf("gen: %s: %w", sealFile, err)
	}
	files[sealFile] = b.Bytes()
	return files, nil
}

// sealFile is internal/seal's view of the stage table.
const sealFile = "internal/seal/stages_gen.go"

// sealData is what internal/seal's generated file says: the stages whose
// seal starts a chain, and the gates after them, each with its verdict.
type sealData struct {
	Sources       []string
	SourceVerdict call.Status
	Gates         []sealGate
}

type sealGate struct {
	Name    string
	Verdict call.Status
}

// sealStages reads the seal chain off the stage table: the sources are the
// stages that hand calls to the first gate (the stage of a received call:
// accumulate creates calls, repair re-creates them), the gates are every
// other stage before execute in table order, and each gate's verdict is the
// one input of the stage after it (the last one's: execute's).
func sealStages() (sealData, error) {
	d := sealData{SourceVerdict: call.Received}
	first := streams.Next(call.Received)
	for _, st := range streams.Table() {
		switch {
		case st.Name == streams.Execute:
		case st.Name != first && slices.Contains(authz.Routes(st.Name), first):
			d.Sources = append(d.Sources, st.Name)
		default:
			d.Gates = append(d.Gates, sealGate{Name: st.Name})
		}
	}
	next := append(slices.Clone(d.Gates), sealGate{Name: streams.Execute})
	for i := range d.Gates {
		st, _ := streams.Lookup(next[i+1].Name)
		if len(st.Inputs) != 1 {
			return sealData{}, fmt.Errorf("gen: %s: stage %s after gate %s has %d inputs: its verdict is ambiguous", sealFile, st.Name, d.Gates[i].Name, len(st.Inputs))
		}
		d.Gates[i].Verdict = st.Inputs[0]
	}
	if len(d.Gates) == 0 || d.Gates[0].Name != first {
		return sealData{}, fmt.Errorf("gen: %s: the first gate after the sources is not %s, where received calls go", sealFile, first)
	}
	return d, nil
}

func sealFiles(stages []string) []string {
	var out []string
	for _, st := range stages {
		out = append(out, seal.FileName(st))
	}
	return out
}

// Stale lists the generated files under root that differ from Files.
func Stale(root string, files map[string][]byte) []string {
	var stale []string
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, path))
		if err != nil || !bytes.Equal(got, want) {
			stale = append(stale, path)
		}
	}
	slices.Sort(stale)
	return stale
}

func main() {
	write := flag.Bool("w", false, "write the files (else list the stale ones and fail)")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	files, err := Files()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	docs, err := Docs(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	maps.Copy(files, docs)
	stale := Stale(root, files)
	if !*write {
		for _, p := range stale {
			fmt.Println("stale:", p)
		}
		if len(stale) > 0 {
			os.Exit(1)
		}
		return
	}
	for _, p := range stale {
		path := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(path, files[p], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", p)
	}
}

// bindFunc names internal/stage's binding of a stage (parse: BindParse),
// which its services/<stage>/main.go passes to stage.Main so the binary
// links only that stage's code.
func bindFunc(stage string) string {
	if stage == "" {
		return ""
	}
	return "Bind" + strings.ToUpper(stage[:1]) + stage[1:]
}
