package deploy

import (
	"regexp"
	"slices"
	"strings"
)

// kustomize's generated ConfigMap and Secrets carry a content hash in their
// names (name-<10 characters>), so a change rolls what reads them; the
// chart names them plainly and rolls the pods with checksum/* annotations.
func kustomizeHashed() *regexp.Regexp {
	return regexp.MustCompile(`^(nats-accounts|toolgate-nats-users|toolgate-seal-keys|toolgate-exec-signing)-[a-z0-9]{10}$`)
}

// helmOnlyLabels are the labels Helm's conventions add to every object's
// metadata (never to a selector or a pod template).
func helmOnlyLabels() []string {
	return []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version"}
}

// generatedSecrets are the Secrets made of random passwords and keys: each
// side makes its own, so only their keys compare.
func generatedSecrets() []string {
	return []string{"toolgate-nats-users", "toolgate-seal-keys", "toolgate-exec-signing"}
}

// normaliseKustomize renames the hashed generated objects and every
// reference to them to their plain names.
func normaliseKustomize(objs map[string]map[string]any) map[string]map[string]any {
	hashed := kustomizeHashed()
	out := map[string]map[string]any{}
	for k, o := range objs {
		kind, name, _ := strings.Cut(k, "/")
		if m := hashed.FindStringSubmatch(name); m != nil {
			name = m[1]
		}
		out[kind+"/"+name] = walkStrings(o, func(s string) string {
			if m := hashed.FindStringSubmatch(s); m != nil {
				return m[1]
			}
			return s
		}).(map[string]any)
	}
	return out
}

// normaliseHelm drops what Helm adds and the base has no counterpart for:
// its labels, the checksum/* annotations that roll pods (kustomize renames
// instead), and the release revision in the streams Job's name.
func normaliseHelm(objs map[string]map[string]any) {
	if job, ok := objs["Job/toolgate-streams-1"]; ok {
		job["metadata"].(map[string]any)["name"] = "toolgate-streams"
		delete(objs, "Job/toolgate-streams-1")
		objs["Job/toolgate-streams"] = job
	}
	for _, o := range objs {
		meta, _ := o["metadata"].(map[string]any)
		dropKeys(meta, "labels", func(k string) bool { return slices.Contains(helmOnlyLabels(), k) })
		spec, _ := o["spec"].(map[string]any)
		tmpl, _ := spec["template"].(map[string]any)
		tmeta, _ := tmpl["metadata"].(map[string]any)
		dropKeys(tmeta, "annotations", func(k string) bool { return strings.HasPrefix(k, "checksum/") })
	}
}

// redactGenerated replaces the values of the generated Secrets on both
// sides by a placeholder: they are random on each side. Their validity is
// TestHelm_generated_secrets_are_what_toolgate_reads.
func redactGenerated(objs map[string]map[string]any) {
	for _, name := range generatedSecrets() {
		o := objs["Secret/"+name]
		data, _ := o["data"].(map[string]any)
		for k := range data {
			data[k] = "<generated>"
		}
	}
}

func dropKeys(m map[string]any, field string, drop func(string) bool) {
	if m == nil {
		return
	}
	sub, _ := m[field].(map[string]any)
	for k := range sub {
		if drop(k) {
			delete(sub, k)
		}
	}
	if sub != nil && len(sub) == 0 {
		delete(m, field)
	}
}

// walkStrings applies f to every string in v (a decoded JSON value).
func walkStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = walkStrings(e, f)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = walkStrings(e, f)
		}
		return out
	}
	return v
}
