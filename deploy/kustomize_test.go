package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/streams"
)

// rendered is one kustomization's output, every object decoded strictly.
type rendered struct {
	deployments  map[string]*appsv1.Deployment
	statefulSets map[string]*appsv1.StatefulSet
	pdbs         map[string]*policyv1.PodDisruptionBudget
	services     map[string]*corev1.Service
	configMaps   map[string]*corev1.ConfigMap
	secrets      map[string]*corev1.Secret
	jobs         map[string]*batchv1.Job
	hpas         map[string]*autoscalingv2.HorizontalPodAutoscaler
	policies     map[string]*networkingv1.NetworkPolicy
	scaled       map[string]*scaledObject
	monitors     map[string]*serviceMonitor
	namespaces   map[string]*corev1.Namespace
	// apiVersions are the apiVersion of every object, "v1", "apps/v1",
	// "keda.sh/v1alpha1", …: a group the cluster lacks fails the apply.
	apiVersions map[string][]string
}

// render runs kustomize on dir and decodes every object into its type,
// rejecting unknown fields: a misspelt or misplaced field fails here, not in
// the cluster.
//
// It renders a copy of deploy/ whose secrets were made as an operator
// makes them (generated): the committed tree has none, and fails to build.
func render(t *testing.T, dir string) *rendered {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(generated(t), dir))
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
	}
	r := &rendered{
		deployments: map[string]*appsv1.Deployment{}, statefulSets: map[string]*appsv1.StatefulSet{},
		pdbs: map[string]*policyv1.PodDisruptionBudget{}, services: map[string]*corev1.Service{},
		configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}, jobs: map[string]*batchv1.Job{},
		hpas: map[string]*autoscalingv2.HorizontalPodAutoscaler{}, policies: map[string]*networkingv1.NetworkPolicy{},
		scaled: map[string]*scaledObject{}, monitors: map[string]*serviceMonitor{}, namespaces: map[string]*corev1.Namespace{},
		apiVersions: map[string][]string{},
	}
	for _, res := range rm.Resources() {
		y, err := res.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		kind, name := res.GetKind(), res.GetName()
		r.apiVersions[res.GetApiVersion()] = append(r.apiVersions[res.GetApiVersion()], kind+" "+name)
		if kind != "Namespace" && res.GetNamespace() != "toolgate" {
			t.Errorf("%s %s is in namespace %q, want toolgate", kind, name, res.GetNamespace())
		}
		var target any
		switch kind {
		case "Deployment":
			target = into(r.deployments, name)
		case "StatefulSet":
			target = into(r.statefulSets, name)
		case "PodDisruptionBudget":
			target = into(r.pdbs, name)
		case "Service":
			target = into(r.services, name)
		case "ConfigMap":
			target = into(r.configMaps, name)
		case "Secret":
			target = into(r.secrets, name)
		case "Job":
			target = into(r.jobs, name)
		case "HorizontalPodAutoscaler":
			target = into(r.hpas, name)
		case "NetworkPolicy":
			target = into(r.policies, name)
		case "ScaledObject":
			target = into(r.scaled, name)
		case "ServiceMonitor":
			target = into(r.monitors, name)
		case "Namespace":
			target = into(r.namespaces, name)
		default:
			t.Errorf("%s %s: a kind this test does not know; add its type", kind, name)
			continue
		}
		if err := strict(y, target); err != nil {
			t.Errorf("%s %s: %v\n%s", kind, name, err, y)
		}
	}
	return r
}

func into[T any](m map[string]*T, name string) *T {
	v := new(T)
	m[name] = v
	return v
}

func strict(y []byte, v any) error {
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func TestKustomize_base_objects_decode_strictly(t *testing.T) {
	r := render(t, "base")
	if len(r.namespaces) != 1 || r.namespaces["toolgate"] == nil {
		t.Fatalf("namespaces %v, want toolgate", keys(r.namespaces))
	}
	if len(r.policies) < 3 {
		t.Errorf("network policies %v, want stages, nats and redis", keys(r.policies))
	}
}

func TestKustomize_every_stage_has_deployment_probes_pdb_and_scaler(t *testing.T) {
	r := render(t, "base")
	for _, st := range streams.Names() {
		t.Run(st, func(t *testing.T) {
			name := "toolgate-" + st
			d := r.deployments[name]
			if d == nil {
				t.Fatalf("no Deployment %s (have %v)", name, keys(r.deployments))
			}
			pod := d.Spec.Template.Spec
			if g := pod.TerminationGracePeriodSeconds; g == nil || *g <= 30 {
				t.Errorf("terminationGracePeriodSeconds %v, want more than AckWait (30 s)", g)
			}
			if len(pod.Containers) != 1 {
				t.Fatalf("%d containers", len(pod.Containers))
			}
			c := pod.Containers[0]
			if !slices.Equal(c.Command, []string{"/usr/local/bin/" + st}) {
				t.Errorf("command %v", c.Command)
			}
			probe(t, "readiness", c.ReadinessProbe, "/readyz")
			probe(t, "liveness", c.LivenessProbe, "/healthz")
			if v := envValue(c, "TOOLGATE_NATS_USER"); v != st {
				t.Errorf("TOOLGATE_NATS_USER = %q, want its own user %q", v, st)
			}
			pw := envRef(c, "TOOLGATE_NATS_PASSWORD")
			if users := r.secret(t, "toolgate-nats-users"); pw == nil || pw.Name != users.Name || pw.Key != authz.PasswordVar(st) {
				t.Errorf("TOOLGATE_NATS_PASSWORD from %+v, want %s/%s", pw, users.Name, authz.PasswordVar(st))
			}
			if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
				t.Error("root filesystem is writable")
			}
			pdb := r.pdbs[name]
			if pdb == nil {
				t.Fatalf("no PodDisruptionBudget %s", name)
			}
			if pdb.Spec.Selector == nil || pdb.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != d.Spec.Template.Labels["app.kubernetes.io/name"] {
				t.Errorf("PDB selects %v, not the Deployment's pods", pdb.Spec.Selector)
			}
			so := r.scaled[name]
			if so == nil {
				t.Fatalf("no ScaledObject %s", name)
			}
			if so.Spec.ScaleTargetRef.Name != name || so.Spec.ScaleTargetRef.Kind != "Deployment" {
				t.Errorf("ScaledObject targets %+v", so.Spec.ScaleTargetRef)
			}
			if so.Spec.MinReplicaCount == nil || *so.Spec.MinReplicaCount < 2 {
				t.Errorf("minReplicaCount %v: below 2 the PDB blocks node drains", so.Spec.MinReplicaCount)
			}
			if len(so.Spec.Triggers) != 1 || so.Spec.Triggers[0].Type != "nats-jetstream" {
				t.Fatalf("triggers %+v, want one nats-jetstream", so.Spec.Triggers)
			}
			md := so.Spec.Triggers[0].Metadata
			for k := range md {
				if !slices.Contains(natsJetStreamMetadata, k) {
					t.Errorf("trigger metadata %q is not a documented nats-jetstream parameter", k)
				}
			}
			if md["stream"] != streams.StreamOf(st) || md["consumer"] != st {
				t.Errorf("scales on %s/%s, want the stage's durable %s/%s", md["stream"], md["consumer"], streams.StreamOf(st), st)
			}
			for _, k := range []string{"natsServerMonitoringEndpoint", "account", "lagThreshold"} {
				if md[k] == "" {
					t.Errorf("trigger lacks %s", k)
				}
			}
		})
	}
}

func probe(t *testing.T, kind string, p *corev1.Probe, path string) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Errorf("no HTTP %s probe", kind)
		return
	}
	if p.HTTPGet.Path != path || p.HTTPGet.Port.String() != "http" {
		t.Errorf("%s probe on %s:%s, want %s:http", kind, p.HTTPGet.Path, p.HTTPGet.Port.String(), path)
	}
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func envRef(c corev1.Container, name string) *corev1.SecretKeySelector {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil {
			return e.ValueFrom.SecretKeyRef
		}
	}
	return nil
}

func keys[T any](m map[string]T) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestKustomize_nats_runs_the_generated_users_with_synchronous_writes(t *testing.T) {
	r := render(t, "base")
	sts := r.statefulSets["nats"]
	if sts == nil || sts.Spec.Replicas == nil || *sts.Spec.Replicas != 3 {
		t.Fatalf("NATS StatefulSet %v, want 3 replicas", sts)
	}
	var accounts *corev1.ConfigMap
	for name, cm := range r.configMaps {
		if strings.HasPrefix(name, "nats-accounts-") {
			accounts = cm
		}
	}
	if accounts == nil {
		t.Fatalf("no generated ConfigMap nats-accounts-<hash> (have %v)", keys(r.configMaps))
	}
	want, err := authz.Render()
	if err != nil {
		t.Fatal(err)
	}
	if accounts.Data["nats-accounts.conf"] != want {
		t.Fatal("ConfigMap nats-accounts differs from authz.Render(): run go run ./services/toolgate authz render > deploy/base/nats-accounts.conf")
	}
	mounted := false
	for _, v := range sts.Spec.Template.Spec.Volumes {
		mounted = mounted || (v.ConfigMap != nil && v.ConfigMap.Name == accounts.Name)
	}
	if !mounted {
		t.Errorf("the NATS pods do not mount %s", accounts.Name)
	}
	users := r.secret(t, "toolgate-nats-users")
	// Lay the two files out as the pod sees them and let nats-server load
	// them with the Secret's values in the environment.
	root := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("nats-config/nats.conf", r.configMaps["nats-config"].Data["nats.conf"])
	write("nats-accounts/nats-accounts.conf", accounts.Data["nats-accounts.conf"])
	t.Setenv("POD_NAME", "nats-0")
	for _, u := range authz.Names() {
		v, ok := users.Data[authz.PasswordVar(u)]
		if !ok || len(v) < 32 {
			t.Fatalf("Secret toolgate-nats-users lacks %s (%q)", authz.PasswordVar(u), v)
		}
		t.Setenv(authz.PasswordVar(u), string(v))
	}
	opts, err := server.ProcessConfigFile(filepath.Join(root, "nats-config/nats.conf"))
	if err != nil {
		t.Fatalf("nats-server rejects the rendered configuration: %v", err)
	}
	if !opts.SyncAlways {
		t.Error("JetStream sync_interval is not always: an acknowledged call could be lost in a node crash")
	}
	if len(opts.Users) != len(authz.Names()) || opts.ServerName != "nats-0" {
		t.Errorf("%d users, server name %q", len(opts.Users), opts.ServerName)
	}
	job := r.jobs["toolgate-streams"]
	if job == nil || !slices.Equal(job.Spec.Template.Spec.Containers[0].Command, []string{"/usr/local/bin/toolgate", "streams", "apply"}) {
		t.Fatalf("no Job applying the streams as admin: %v", job)
	}
	if envValue(job.Spec.Template.Spec.Containers[0], "TOOLGATE_NATS_USER") != authz.Admin {
		t.Error("the streams Job does not run as the admin user")
	}
	if r.configMaps["toolgate-config"].Data["TOOLGATE_ENSURE"] != "false" || r.configMaps["toolgate-config"].Data["TOOLGATE_STREAM_REPLICAS"] != "3" {
		t.Errorf("toolgate-config %v: stages must not create streams, which are R3", r.configMaps["toolgate-config"].Data)
	}
}

func TestKustomize_hpa_overlay_swaps_scaled_objects_for_cpu_autoscalers(t *testing.T) {
	r := render(t, "overlays/hpa")
	if len(r.scaled) != 0 {
		t.Errorf("ScaledObjects left: %v", keys(r.scaled))
	}
	for _, st := range streams.Names() {
		h := r.hpas["toolgate-"+st]
		if h == nil {
			t.Errorf("no HorizontalPodAutoscaler for %s", st)
			continue
		}
		if h.Spec.ScaleTargetRef.Name != "toolgate-"+st || h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 2 {
			t.Errorf("%s: HPA %+v", st, h.Spec)
		}
		if r.deployments["toolgate-"+st] == nil {
			t.Errorf("%s: the overlay lost the Deployment", st)
		}
	}
}

// builtIn are the API groups every Kubernetes cluster serves; anything
// else needs its operator's CRDs installed first.
var builtIn = []string{"v1", "apps/v1", "batch/v1", "policy/v1", "autoscaling/v2", "networking.k8s.io/v1"}

// Before, the base (and so the hpa overlay, "for clusters without KEDA")
// carried a ServiceMonitor: kubectl apply failed on a cluster without the
// Prometheus operator's CRDs. Now the base needs KEDA's CRDs only, the hpa
// overlay none, and the ServiceMonitor is a component the prometheus
// overlay adds.
func TestKustomize_crds_each_kustomization_needs(t *testing.T) {
	for _, c := range []struct {
		dir  string
		want []string // API groups beyond the built-in ones
	}{
		{"base", []string{"keda.sh/v1alpha1"}},
		{"overlays/hpa", nil},
		{"overlays/prometheus", []string{"keda.sh/v1alpha1", "monitoring.coreos.com/v1"}},
	} {
		r := render(t, c.dir)
		var extra []string
		for v := range r.apiVersions {
			if !slices.Contains(builtIn, v) {
				extra = append(extra, v)
			}
		}
		slices.Sort(extra)
		if !slices.Equal(extra, c.want) {
			t.Errorf("%s needs %v beyond the built-in API groups, want %v", c.dir, extra, c.want)
		}
	}
	r := render(t, "overlays/prometheus")
	m := r.monitors["toolgate-stages"]
	if m == nil || len(m.Spec.Endpoints) == 0 || m.Spec.Endpoints[0].Path != "/metrics" || m.Spec.Endpoints[0].Port != "http" {
		t.Fatalf("ServiceMonitor %+v, want /metrics on port http", m)
	}
	if len(r.deployments) != len(streams.Names()) {
		t.Errorf("the prometheus overlay has %d Deployments, want every stage's", len(r.deployments))
	}
}
