package deploy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Every pod the chart renders, in every mode, passes Pod Security
// restricted, as the base's do (the namespace enforces it).
func TestHelm_every_pod_passes_pod_security_restricted(t *testing.T) {
	for _, sets := range [][]string{
		nil,
		{"autoscaling.mode=hpa", "serviceMonitor.enabled=true"},
		{"autoscaling.mode=none", "stages.parse.replicas=4"},
		{"nats.deploy=false", "nats.url=nats://nats.messaging.svc:4222", "nats.monitoringEndpoint=nats.messaging.svc:8222", "redis.deploy=false", "redis.url=redis://redis.cache.svc:6379/0"},
	} {
		r := helmRender(t, sets...)
		pods := r.pods()
		if len(pods) < 8 { // seven stages and the streams Job at least
			t.Fatalf("%v: only %d pods: %v", sets, len(pods), keys(pods))
		}
		for name, spec := range pods {
			if v := restrictedViolations(spec); len(v) > 0 {
				t.Errorf("%v: %s is refused by Pod Security restricted:\n  %s", sets, name, strings.Join(v, "\n  "))
			}
		}
	}
}

// The checks are not vacuous: each of a few things restricted refuses is
// reported.
func TestRestrictedViolations_reports_what_restricted_refuses(t *testing.T) {
	no, yes := false, true
	root := int64(0)
	good := func() corev1.PodSpec {
		return corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "c", SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			}}},
		}
	}
	if v := restrictedViolations(good()); len(v) > 0 {
		t.Fatalf("a restricted pod is reported: %v", v)
	}
	for name, spoil := range map[string]func(*corev1.PodSpec){
		"host network":      func(s *corev1.PodSpec) { s.HostNetwork = true },
		"no seccomp":        func(s *corev1.PodSpec) { s.SecurityContext.SeccompProfile = nil },
		"may run as root":   func(s *corev1.PodSpec) { s.SecurityContext.RunAsNonRoot = nil },
		"user 0":            func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.RunAsUser = &root },
		"escalation":        func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil },
		"capabilities kept": func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.Capabilities = nil },
		"privileged":        func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.Privileged = &yes },
		"host path": func(s *corev1.PodSpec) {
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		},
		"host port": func(s *corev1.PodSpec) {
			s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
		},
		"init container": func(s *corev1.PodSpec) { s.InitContainers = []corev1.Container{{Name: "init"}} },
	} {
		s := good()
		spoil(&s)
		if v := restrictedViolations(s); len(v) == 0 {
			t.Errorf("%s: not reported", name)
		}
	}
}
