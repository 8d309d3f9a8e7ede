package deploy

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// newRendered is an empty rendered, every map made.
func newRendered() *rendered {
	return &rendered{
		deployments: map[string]*appsv1.Deployment{}, statefulSets: map[string]*appsv1.StatefulSet{},
		pdbs: map[string]*policyv1.PodDisruptionBudget{}, services: map[string]*corev1.Service{},
		configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}, jobs: map[string]*batchv1.Job{},
		hpas: map[string]*autoscalingv2.HorizontalPodAutoscaler{}, policies: map[string]*networkingv1.NetworkPolicy{},
		scaled: map[string]*scaledObject{}, monitors: map[string]*serviceMonitor{}, namespaces: map[string]*corev1.Namespace{},
		apiVersions: map[string][]string{},
	}
}

// add decodes one object strictly (unknown fields refused) into its type,
// as render does for kustomize (a copy: kustomize_test.go keeps its switch
// inline). Two objects of one kind and name fail: the cluster would keep one.
func (r *rendered) add(t *testing.T, apiVersion, kind, name string, y []byte) {
	t.Helper()
	r.apiVersions[apiVersion] = append(r.apiVersions[apiVersion], kind+" "+name)
	var target any
	switch kind {
	case "Deployment":
		target = intoOnce(t, r.deployments, kind, name)
	case "StatefulSet":
		target = intoOnce(t, r.statefulSets, kind, name)
	case "PodDisruptionBudget":
		target = intoOnce(t, r.pdbs, kind, name)
	case "Service":
		target = intoOnce(t, r.services, kind, name)
	case "ConfigMap":
		target = intoOnce(t, r.configMaps, kind, name)
	case "Secret":
		target = intoOnce(t, r.secrets, kind, name)
	case "Job":
		target = intoOnce(t, r.jobs, kind, name)
	case "HorizontalPodAutoscaler":
		target = intoOnce(t, r.hpas, kind, name)
	case "NetworkPolicy":
		target = intoOnce(t, r.policies, kind, name)
	case "ScaledObject":
		target = intoOnce(t, r.scaled, kind, name)
	case "ServiceMonitor":
		target = intoOnce(t, r.monitors, kind, name)
	case "Namespace":
		target = intoOnce(t, r.namespaces, kind, name)
	default:
		t.Errorf("%s %s: a kind this test does not know; add its type", kind, name)
		return
	}
	if err := strict(y, target); err != nil {
		t.Errorf("%s %s: %v\n%s", kind, name, err, y)
	}
}

func intoOnce[T any](t *testing.T, m map[string]*T, kind, name string) *T {
	t.Helper()
	if _, dup := m[name]; dup {
		t.Errorf("two %s named %s", kind, name)
	}
	return into(m, name)
}

// objects are every object as JSON decoded into generic values (from the
// typed object, so defaults and formatting are the types'), keyed
// "Kind/name".
func (r *rendered) objects(t *testing.T) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	put := func(kind, name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		out[kind+"/"+name] = m
	}
	for n, v := range r.deployments {
		put("Deployment", n, v)
	}
	for n, v := range r.statefulSets {
		put("StatefulSet", n, v)
	}
	for n, v := range r.pdbs {
		put("PodDisruptionBudget", n, v)
	}
	for n, v := range r.services {
		put("Service", n, v)
	}
	for n, v := range r.configMaps {
		put("ConfigMap", n, v)
	}
	for n, v := range r.secrets {
		put("Secret", n, v)
	}
	for n, v := range r.jobs {
		put("Job", n, v)
	}
	for n, v := range r.hpas {
		put("HorizontalPodAutoscaler", n, v)
	}
	for n, v := range r.policies {
		put("NetworkPolicy", n, v)
	}
	for n, v := range r.scaled {
		put("ScaledObject", n, v)
	}
	for n, v := range r.monitors {
		put("ServiceMonitor", n, v)
	}
	for n, v := range r.namespaces {
		put("Namespace", n, v)
	}
	return out
}
