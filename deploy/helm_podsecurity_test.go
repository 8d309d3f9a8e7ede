package deploy

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// restrictedViolations lists what in spec the Pod Security restricted
// profile (https://kubernetes.io/docs/concepts/security/pod-security-standards/)
// refuses: the checks TestReadme_tools_apply_pod_is_allowed_in_the_restricted_namespace
// makes (runAsNonRoot, seccomp RuntimeDefault, no privilege escalation,
// every capability dropped) and the profile's others (host namespaces and
// ports, privileged, volume types, root user, added capabilities, sysctls,
// proc mount).
func restrictedViolations(spec corev1.PodSpec) []string {
	var out []string
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		out = append(out, "shares a host namespace")
	}
	ps := spec.SecurityContext
	if ps == nil {
		ps = &corev1.PodSecurityContext{}
	}
	for _, s := range ps.Sysctls {
		out = append(out, "sets sysctl "+s.Name)
	}
	if ps.RunAsUser != nil && *ps.RunAsUser == 0 {
		out = append(out, "pod runs as user 0")
	}
	for _, v := range spec.Volumes {
		if v.ConfigMap == nil && v.Secret == nil && v.EmptyDir == nil && v.PersistentVolumeClaim == nil &&
			v.Projected == nil && v.DownwardAPI == nil && v.CSI == nil && v.Ephemeral == nil {
			out = append(out, "volume "+v.Name+" is of a type restricted refuses")
		}
	}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		bad := func(format string, a ...any) { out = append(out, c.Name+": "+fmt.Sprintf(format, a...)) }
		if sc.Privileged != nil && *sc.Privileged {
			bad("privileged")
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			bad("allowPrivilegeEscalation is not false")
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			bad("does not drop ALL capabilities")
		} else if len(sc.Capabilities.Add) > 0 && !slices.Equal(sc.Capabilities.Add, []corev1.Capability{"NET_BIND_SERVICE"}) {
			bad("adds capabilities %v", sc.Capabilities.Add)
		}
		nonRoot := (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) || (sc.RunAsNonRoot == nil && ps.RunAsNonRoot != nil && *ps.RunAsNonRoot)
		if !nonRoot {
			bad("runAsNonRoot is not true")
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			bad("runs as user 0")
		}
		seccomp := sc.SeccompProfile
		if seccomp == nil {
			seccomp = ps.SeccompProfile
		}
		if seccomp == nil || (seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault && seccomp.Type != corev1.SeccompProfileTypeLocalhost) {
			bad("seccomp profile %v, want RuntimeDefault or Localhost", seccomp)
		}
		if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
			bad("procMount %s", *sc.ProcMount)
		}
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				bad("hostPort %d", p.HostPort)
			}
		}
	}
	return out
}

// pods are the pod templates of every workload in r, by "Kind/name".
func (r *rendered) pods() map[string]corev1.PodSpec {
	out := map[string]corev1.PodSpec{}
	for n, d := range r.deployments {
		out["Deployment/"+n] = d.Spec.Template.Spec
	}
	for n, s := range r.statefulSets {
		out["StatefulSet/"+n] = s.Spec.Template.Spec
	}
	for n, j := range r.jobs {
		out["Job/"+n] = j.Spec.Template.Spec
	}
	return out
}
