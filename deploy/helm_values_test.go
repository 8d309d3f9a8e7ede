package deploy

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/toolgate/toolgate/streams"
)

// values.schema.json refuses a misspelt, misplaced or mistyped value:
// helm install fails instead of ignoring it.
func TestHelm_schema_refuses_bad_values(t *testing.T) {
	if _, err := helmTemplate("autoscaling.mode=hpa", "stages.parse.resources.limits.memory=1Gi", "config.extra.TOOLGATE_REPAIR_ENDPOINT=https://models.example/v1"); err != nil {
		t.Fatalf("good values refused: %v", err)
	}
	for _, set := range []string{
		"autoscaling.mode=kubernetes",                 // not none|keda|hpa
		"autoscalling.mode=hpa",                       // misspelt top-level key
		"stages.parse.replics=3",                      // misspelt stage key
		"stages.parze.replicas=3",                     // no such stage
		"stages.parse.replicas=three",                 // not an integer
		"stages.parse.resources.limits.memory=lots",   // not a quantity
		"stages.parse.resources.limit.memory=1Gi",     // limit, not limits
		"image.pullPolicy=Sometimes",                  // not a pull policy
		"serviceMonitor.enabeld=true",                 // misspelt
		"nats.url=http://nats.example:4222",           // not a NATS URL
		"redis.url=tcp://redis.example:6379",          // not a Redis URL
		"config.extra.PATH=/tmp",                      // not a toolgate setting
		"secrets.existing.natsUsers=My_Users",         // not a Secret name
		"config.logLevel=loud",                        // not a level
		"networkPolicy.monitoringNamespace=Not Valid", // not a namespace
	} {
		_, err := helmTemplate(set)
		if err == nil || !strings.Contains(err.Error(), "values don't meet the specifications of the schema") {
			t.Errorf("--set %s: %v, want the schema to refuse it", set, err)
		}
	}
}

// Values that are well typed but contradict each other fail the render
// with a message saying what to set.
func TestHelm_refuses_contradicting_values(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"stages.parse.replicas=3"}, "stages.parse.replicas is set but autoscaling.mode is keda"},
		{[]string{"autoscaling.mode=hpa", "stages.execute.replicas=3"}, "stages.execute.replicas is set but autoscaling.mode is hpa"},
		{[]string{"nats.deploy=false"}, "nats.url is required"},
		{[]string{"redis.deploy=false"}, "redis.url is required"},
		{[]string{"nats.deploy=false", "nats.url=nats://nats.example:4222"}, "nats.monitoringEndpoint is required"},
		{[]string{"stages.repair.autoscaling.minReplicas=30"}, "stages.repair: autoscaling minReplicas 30 is above maxReplicas 20"},
	} {
		_, err := helmTemplate(c.sets...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.sets, err, c.want)
		}
	}
	// With an external NATS and no autoscaler the monitoring endpoint is not needed.
	if _, err := helmTemplate("nats.deploy=false", "nats.url=nats://nats.example:4222", "autoscaling.mode=hpa"); err != nil {
		t.Errorf("external NATS with hpa: %v", err)
	}
}

func TestHelm_each_autoscaling_mode_renders_its_kinds(t *testing.T) {
	for _, c := range []struct {
		mode      string
		scaled    int
		hpas      int
		replicas  bool // the Deployments carry a replicas field
		extraAPIs []string
	}{
		{"keda", len(streams.Names()), 0, false, []string{"keda.sh/v1alpha1"}},
		{"hpa", 0, len(streams.Names()), false, nil},
		{"none", 0, 0, true, nil},
	} {
		r := helmRender(t, "autoscaling.mode="+c.mode)
		if len(r.scaled) != c.scaled || len(r.hpas) != c.hpas {
			t.Errorf("%s: %d ScaledObjects, %d HPAs; want %d and %d", c.mode, len(r.scaled), len(r.hpas), c.scaled, c.hpas)
		}
		for _, st := range streams.Names() {
			name := "toolgate-" + st
			d := r.deployments[name]
			if d == nil {
				t.Fatalf("%s: no Deployment %s", c.mode, name)
			}
			if (d.Spec.Replicas != nil) != c.replicas {
				t.Errorf("%s: %s replicas %v", c.mode, name, d.Spec.Replicas)
			}
			if so := r.scaled[name]; c.mode == "keda" && (so == nil || so.Spec.ScaleTargetRef.Name != name) {
				t.Errorf("keda: ScaledObject %s %+v", name, so)
			}
			if h := r.hpas[name]; c.mode == "hpa" && (h == nil || h.Spec.ScaleTargetRef.Name != name) {
				t.Errorf("hpa: HPA %s %+v", name, h)
			}
		}
		var extra []string
		for v := range r.apiVersions {
			if !slices.Contains(builtIn, v) {
				extra = append(extra, v)
			}
		}
		if !slices.Equal(extra, c.extraAPIs) {
			t.Errorf("%s needs %v beyond the built-in API groups, want %v", c.mode, extra, c.extraAPIs)
		}
	}
}

func TestHelm_servicemonitor_only_when_enabled(t *testing.T) {
	if r := helmRender(t); len(r.monitors) != 0 || len(r.apiVersions["monitoring.coreos.com/v1"]) != 0 {
		t.Errorf("a ServiceMonitor by default: %v", keys(r.monitors))
	}
	r := helmRender(t, "serviceMonitor.enabled=true", "serviceMonitor.interval=15s")
	m := r.monitors["toolgate-stages"]
	if m == nil || len(m.Spec.Endpoints) != 1 || m.Spec.Endpoints[0].Interval != "15s" || m.Spec.Endpoints[0].Port != "http" {
		t.Fatalf("ServiceMonitor %+v", m)
	}
	for _, st := range streams.Names() {
		svc := r.services["toolgate-"+st]
		for k, v := range m.Spec.Selector.MatchLabels {
			if svc.Labels[k] != v {
				t.Errorf("the ServiceMonitor does not select Service %s (%s=%s)", svc.Name, k, v)
			}
		}
	}
}

// env is the environment c sees: its envFrom ConfigMaps' and Secrets'
// keys (later sources win), then its own env values.
func (r *rendered) env(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef != nil && r.configMaps[from.ConfigMapRef.Name] != nil {
			for k, v := range r.configMaps[from.ConfigMapRef.Name].Data {
				out[k] = v
			}
		}
		if from.SecretRef != nil && r.secrets[from.SecretRef.Name] != nil {
			s := r.secrets[from.SecretRef.Name]
			for k, v := range s.Data {
				out[k] = string(v)
			}
			for k, v := range s.StringData {
				out[k] = v
			}
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			out[e.Name] = e.Value
		}
	}
	return out
}

func TestHelm_external_nats_and_redis_wire_into_every_stage(t *testing.T) {
	const natsURL, monitor, redisURL = "nats://nats.messaging.svc:4223", "nats-mon.messaging.svc:8223", "redis://redis.cache.svc:6380/2"
	r := helmRender(t, "nats.deploy=false", "nats.url="+natsURL, "nats.monitoringEndpoint="+monitor, "redis.deploy=false", "redis.url="+redisURL)
	if len(r.statefulSets) != 0 || r.policies["nats"] != nil || r.policies["redis"] != nil || r.configMaps["nats-accounts"] != nil {
		t.Errorf("bundled NATS or Redis rendered: StatefulSets %v, NetworkPolicies %v", keys(r.statefulSets), keys(r.policies))
	}
	if r.secrets["toolgate-nats-users"] == nil {
		t.Error("no toolgate-nats-users: the stages' passwords, which the external server must accept")
	}
	workloads := map[string]corev1.Container{"Job toolgate-streams-1": r.jobs["toolgate-streams-1"].Spec.Template.Spec.Containers[0]}
	for _, st := range streams.Names() {
		workloads[st] = r.deployments["toolgate-"+st].Spec.Template.Spec.Containers[0]
	}
	for name, c := range workloads {
		env := r.env(c)
		if env["TOOLGATE_NATS_URL"] != natsURL || env["TOOLGATE_REDIS_URL"] != redisURL {
			t.Errorf("%s: TOOLGATE_NATS_URL %q, TOOLGATE_REDIS_URL %q", name, env["TOOLGATE_NATS_URL"], env["TOOLGATE_REDIS_URL"])
		}
	}
	for _, st := range streams.Names() {
		if ep := r.scaled["toolgate-"+st].Spec.Triggers[0].Metadata["natsServerMonitoringEndpoint"]; ep != monitor {
			t.Errorf("%s: KEDA asks %s", st, ep)
		}
	}
	var ports []int32
	for _, e := range r.policies["toolgate-stages"].Spec.Egress {
		for _, p := range e.Ports {
			ports = append(ports, p.Port.IntVal)
		}
	}
	if !slices.Contains(ports, 4223) || !slices.Contains(ports, 6380) || slices.Contains(ports, 4222) || slices.Contains(ports, 6379) {
		t.Errorf("the stages may reach ports %v, want the external servers' 4223 and 6380", ports)
	}
	// The bundled ones by default.
	d := helmRender(t)
	env := d.env(d.deployments["toolgate-execute"].Spec.Template.Spec.Containers[0])
	if env["TOOLGATE_NATS_URL"] != "nats://nats.toolgate.svc:4222" || env["TOOLGATE_REDIS_URL"] != "redis://redis.toolgate.svc:6379/0" {
		t.Errorf("default URLs %q, %q", env["TOOLGATE_NATS_URL"], env["TOOLGATE_REDIS_URL"])
	}
}

func TestHelm_replicas_resources_and_autoscaling_land_on_their_stage(t *testing.T) {
	r := helmRender(t, "autoscaling.mode=none", "stages.parse.replicas=5",
		"stages.execute.resources.limits.memory=1Gi", "stages.execute.resources.requests.cpu=250m", "stages.execute.goMemLimit=900MiB")
	for _, st := range streams.Names() {
		d := r.deployments["toolgate-"+st]
		c := d.Spec.Template.Spec.Containers[0]
		replicas, mem, cpu, gomem := int32(2), "512Mi", "100m", "450MiB"
		switch st {
		case streams.Parse:
			replicas = 5
		case streams.Execute:
			mem, cpu, gomem = "1Gi", "250m", "900MiB"
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != replicas {
			t.Errorf("%s: replicas %v, want %d", st, d.Spec.Replicas, replicas)
		}
		if got := c.Resources.Limits.Memory().String(); got != mem {
			t.Errorf("%s: memory limit %s, want %s", st, got, mem)
		}
		if got := c.Resources.Requests.Cpu().String(); got != cpu {
			t.Errorf("%s: cpu request %s, want %s", st, got, cpu)
		}
		if got := envValue(c, "GOMEMLIMIT"); got != gomem {
			t.Errorf("%s: GOMEMLIMIT %s, want %s", st, got, gomem)
		}
	}
	k := helmRender(t, "stages.policy.autoscaling.maxReplicas=40", "stages.policy.autoscaling.lagThreshold=10")
	for _, st := range streams.Names() {
		so := k.scaled["toolgate-"+st]
		max, lag := int32(20), "100"
		if st == streams.Policy {
			max, lag = 40, "10"
		}
		if *so.Spec.MaxReplicaCount != max || so.Spec.Triggers[0].Metadata["lagThreshold"] != lag {
			t.Errorf("%s: ScaledObject max %d lag %s, want %d %s", st, *so.Spec.MaxReplicaCount, so.Spec.Triggers[0].Metadata["lagThreshold"], max, lag)
		}
	}
	h := helmRender(t, "autoscaling.mode=hpa", "stages.repair.autoscaling.cpuUtilization=50", "autoscaling.hpa.maxReplicas=6")
	for _, st := range streams.Names() {
		hpa := h.hpas["toolgate-"+st]
		cpu := int32(70)
		if st == streams.Repair {
			cpu = 50
		}
		if got := *hpa.Spec.Metrics[0].Resource.Target.AverageUtilization; got != cpu || hpa.Spec.MaxReplicas != 6 {
			t.Errorf("%s: HPA cpu %d max %d, want %d 6", st, got, hpa.Spec.MaxReplicas, cpu)
		}
	}
}
