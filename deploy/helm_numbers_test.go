package deploy

import (
	"strconv"
	"testing"
)

// Before, a stage's replicas of 0 (autoscaling none) rendered as 2, and
// numbers from a values file (float64) of a million or more rendered as
// 1e+06, which Kubernetes refuses.
func TestHelm_numbers_render_as_given(t *testing.T) {
	r := helmRender(t, "autoscaling.mode=none", "stages.repair.replicas=0")
	if d := r.deployments["toolgate-repair"]; d.Spec.Replicas == nil || *d.Spec.Replicas != 0 {
		t.Errorf("repair replicas %s, want 0", shown(d.Spec.Replicas))
	}
	files, err := helmValuesFile("autoscaling:\n  keda:\n    maxReplicas: 1000000\n    lagThreshold: 2000000\n")
	if err != nil {
		t.Fatal(err)
	}
	k := decodeManifests(t, files)
	so := k.scaled["toolgate-parse"]
	if so == nil || *so.Spec.MaxReplicaCount != 1000000 || so.Spec.Triggers[0].Metadata["lagThreshold"] != "2000000" {
		t.Errorf("ScaledObject %+v", so)
	}
}

func shown(p *int32) string {
	if p == nil {
		return "unset"
	}
	return strconv.Itoa(int(*p))
}
