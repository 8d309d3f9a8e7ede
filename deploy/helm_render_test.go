package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"path"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/strvals"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// chartDir is the Helm chart, from deploy/.
const chartDir = "helm/toolgate"

// helmNamespace is the release namespace the tests install into: the
// kustomize base's.
const helmNamespace = "toolgate"

// helmTemplate renders the chart as `helm template toolgate
// deploy/helm/toolgate -n toolgate --set s...` does, with Helm's own
// loader, values coalescing, schema validation and template engine. It
// returns the manifests by template file, NOTES.txt included.
func helmTemplate(sets ...string) (map[string]string, error) {
	return helmUpgrade(nil, sets...)
}

// helmUpgrade is helmTemplate as a release's upgrade renders it: the
// templates' lookup asks cluster (nil: none, as helm template has).
func helmUpgrade(cluster engine.ClientProvider, sets ...string) (map[string]string, error) {
	user := map[string]any{}
	for _, s := range sets {
		if err := strvals.ParseInto(s, user); err != nil {
			return nil, err
		}
	}
	return helmValues(cluster, user)
}

// helmValuesFile is helmTemplate with a values file (-f): YAML numbers
// arrive as float64, where --set's are int64.
func helmValuesFile(valuesYAML string) (map[string]string, error) {
	user, err := chartutil.ReadValues([]byte(valuesYAML))
	if err != nil {
		return nil, err
	}
	return helmValues(nil, user)
}

func helmValues(cluster engine.ClientProvider, user map[string]any) (map[string]string, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	vals, err := chartutil.ToRenderValues(ch, user, chartutil.ReleaseOptions{
		Name: "toolgate", Namespace: helmNamespace, Revision: 1, IsInstall: true,
	}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	if cluster == nil {
		return engine.Render(ch, vals)
	}
	return engine.RenderWithClientProvider(ch, vals, cluster)
}

// helmRender renders the chart with sets and decodes every object strictly
// into its Kubernetes type, as render does kustomize's output.
func helmRender(t *testing.T, sets ...string) *rendered {
	t.Helper()
	return helmRenderIn(t, nil, sets...)
}

// helmRenderIn is helmRender against cluster (helmUpgrade).
func helmRenderIn(t *testing.T, cluster engine.ClientProvider, sets ...string) *rendered {
	t.Helper()
	files, err := helmUpgrade(cluster, sets...)
	if err != nil {
		t.Fatalf("helm template %v: %v", sets, err)
	}
	return decodeManifests(t, files)
}

// decodeManifests decodes every object of Helm's rendered files.
func decodeManifests(t *testing.T, files map[string]string) *rendered {
	t.Helper()
	r := newRendered()
	for _, file := range slices.Sorted(func(yield func(string) bool) {
		for f := range files {
			if !yield(f) {
				return
			}
		}
	}) {
		if path.Base(file) == "NOTES.txt" || strings.HasPrefix(path.Base(file), "_") {
			continue
		}
		docs := k8syaml.NewYAMLReader(bufio.NewReader(strings.NewReader(files[file])))
		for {
			doc, err := docs.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var head struct {
				metav1.TypeMeta   `json:",inline"`
				metav1.ObjectMeta `json:"metadata"`
			}
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s: %v\n%s", file, err, doc)
			}
			if head.Kind == "" && len(bytes.TrimSpace(stripComments(doc))) == 0 {
				continue // a document of comments only, or a false condition
			}
			if head.Kind != "Namespace" && head.Namespace != helmNamespace {
				t.Errorf("%s %s is in namespace %q, want %s", head.Kind, head.Name, head.Namespace, helmNamespace)
			}
			r.add(t, head.APIVersion, head.Kind, head.Name, doc)
		}
	}
	return r
}

// stripComments is doc without its comment lines.
func stripComments(doc []byte) []byte {
	var out [][]byte
	for line := range bytes.Lines(doc) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, nil)
}
