package deploy

import (
	"strings"
	"testing"
)

// The chart's source of truth is the kustomize base: with its defaults it
// renders the base, object by object and field by field, and with a value
// each overlay or component. Both sides are decoded strictly into their
// Kubernetes types first, then compared as JSON after normalising what
// legitimately differs:
//
//   - kustomize's generated ConfigMap and Secrets are named name-<hash>;
//     the chart names them plainly (normaliseKustomize) and rolls pods with
//     checksum/* annotations instead (normaliseHelm drops those);
//   - Helm's labels (helm.sh/chart, app.kubernetes.io/managed-by, instance,
//     version) on every object's metadata;
//   - the streams Job's name carries the release revision
//     (toolgate-streams-1): a Job's pod template is immutable, so one name
//     would fail every upgrade that changes the image; a new name runs it
//     anew each upgrade, and Helm deletes the previous one;
//   - the generated Secrets' values: random on each side, so only their
//     keys compare (redactGenerated); and exec-signing.pub, which the base
//     keeps beside the key for operators and the chart cannot make (Helm's
//     template functions cannot derive an Ed25519 public key; no pod
//     mounts it): dropped from the kustomize side;
//   - the Namespace: `helm install --create-namespace` makes it, and a
//     chart that also renders it fails the install, so it renders only with
//     namespace.create (compared in its own case below).
func TestHelm_renders_what_kustomize_renders(t *testing.T) {
	for _, c := range []struct {
		name, dir string
		sets      []string
		namespace bool // compare the Namespace too
		existing  bool // the operator made the generated Secrets: the chart renders none
	}{
		{"defaults are the base", "base", nil, false, false},
		{"namespace.create renders the base's Namespace", "base", []string{"namespace.create=true"}, true, false},
		{"autoscaling.mode=hpa is the hpa overlay", "overlays/hpa", []string{"autoscaling.mode=hpa"}, false, false},
		{"serviceMonitor.enabled is the prometheus overlay", "overlays/prometheus", []string{"serviceMonitor.enabled=true"}, false, false},
		{"secrets.existing is the base with the operator's Secrets", "base", []string{"secrets.existing.natsUsers=toolgate-nats-users",
			"secrets.existing.sealKeys=toolgate-seal-keys", "secrets.existing.execSigning=toolgate-exec-signing"}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			kust := normaliseKustomize(render(t, c.dir).objects(t))
			helm := helmRender(t, c.sets...).objects(t)
			normaliseHelm(helm)
			if !c.namespace {
				delete(kust, "Namespace/"+helmNamespace)
			}
			if data, ok := kust["Secret/toolgate-exec-signing"]["data"].(map[string]any); ok {
				delete(data, "exec-signing.pub")
			}
			if c.existing {
				for _, name := range generatedSecrets() {
					delete(kust, "Secret/"+name)
				}
			}
			redactGenerated(kust)
			redactGenerated(helm)
			if d := diffObjects(kust, helm); len(d) > 0 {
				t.Errorf("helm template %v differs from kustomize %s in %d places (a stage or NATS user added? the chart's stage table is templates/_helpers.tpl toolgate.stageTable, its users files/nats-accounts.conf):\n%s", c.sets, c.dir, len(d), strings.Join(d, "\n"))
			}
			if len(kust) < 20 {
				t.Fatalf("compared only %d objects", len(kust))
			}
		})
	}
}
