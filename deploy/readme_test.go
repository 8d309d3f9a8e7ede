package deploy

import (
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Before, deploy/README's `kubectl run … tools apply -f - < tools.yaml`
// made a pod the namespace's Pod Security (restricted) refuses. The pod it
// overrides decodes strictly, passes the restricted profile's checks and
// runs tools apply on its standard input.
func TestReadme_tools_apply_pod_is_allowed_in_the_restricted_namespace(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "--overrides='")
	if !ok {
		t.Fatal("deploy/README.md has no kubectl run --overrides for tools apply")
	}
	override, tail, ok := strings.Cut(rest, "' < examples/tools.yaml")
	if !ok || strings.Contains(strings.SplitN(tail, "\n", 2)[0], "'") {
		t.Fatalf("the override does not end the command with < examples/tools.yaml: %q", tail)
	}
	// The shell splices the admin's password in.
	override = strings.ReplaceAll(override, `'"$(cat deploy/base/secrets/nats-admin.password)"'`, "PASSWORD")
	var pod corev1.Pod
	if err := strict([]byte(override), &pod); err != nil {
		t.Fatalf("the override is not a pod: %v\n%s", err, override)
	}
	ps := pod.Spec.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext %+v: restricted wants runAsNonRoot and seccomp RuntimeDefault", ps)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("containers %v", pod.Spec.Containers)
	}
	c := pod.Spec.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container securityContext %+v: restricted wants no privilege escalation and every capability dropped", sc)
	}
	if !slices.Equal(c.Command, []string{"/usr/local/bin/toolgate", "tools", "apply", "-f", "-"}) || !c.Stdin {
		t.Errorf("container runs %v (stdin %v), want toolgate tools apply -f - on its standard input", c.Command, c.Stdin)
	}
	if envValue(c, "TOOLGATE_NATS_USER") != "admin" || envValue(c, "TOOLGATE_NATS_PASSWORD") != "PASSWORD" || !strings.HasPrefix(envValue(c, "TOOLGATE_NATS_URL"), "nats://nats.toolgate.svc:") {
		t.Errorf("container env %v, want the admin's credentials and the cluster's NATS", c.Env)
	}
}
