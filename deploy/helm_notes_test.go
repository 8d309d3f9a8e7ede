package deploy

import (
	"strings"
	"testing"
)

func TestHelm_config_extra_reaches_every_stage_and_cannot_override_the_chart(t *testing.T) {
	r := helmRender(t, "config.extra.TOOLGATE_REPAIR_ENDPOINT=https://models.example/v1", "config.extra.OTEL_EXPORTER_OTLP_ENDPOINT=http://otel.example:4318")
	for name, d := range r.deployments {
		env := r.env(d.Spec.Template.Spec.Containers[0])
		if env["TOOLGATE_REPAIR_ENDPOINT"] != "https://models.example/v1" || env["OTEL_EXPORTER_OTLP_ENDPOINT"] != "http://otel.example:4318" {
			t.Errorf("%s: env %v", name, env)
		}
	}
	for _, k := range []string{"TOOLGATE_ENSURE", "TOOLGATE_NATS_URL"} {
		if _, err := helmTemplate("config.extra." + k + "=x"); err == nil || !strings.Contains(err.Error(), "config.extra."+k+": the chart sets it") {
			t.Errorf("config.extra.%s: %v, want it refused", k, err)
		}
	}
}

func TestHelm_notes_say_what_the_install_needs(t *testing.T) {
	for _, c := range []struct {
		sets      []string
		want, not []string
	}{
		{nil, []string{"kubectl label namespace toolgate pod-security.kubernetes.io/enforce=restricted", "KEDA's CRDs", "openssl pkey -pubout", "nats://nats.toolgate.svc:4222", "get job toolgate-streams-1"}, nil},
		{[]string{"autoscaling.mode=hpa", "secrets.existing.natsUsers=a", "secrets.existing.sealKeys=b", "secrets.existing.execSigning=c"},
			[]string{"get secret a ", "exec-signing.pub beside the key in Secret c"}, []string{"KEDA", "generated passwords"}},
	} {
		files, err := helmTemplate(c.sets...)
		if err != nil {
			t.Fatal(err)
		}
		notes := files["toolgate/templates/NOTES.txt"]
		for _, w := range c.want {
			if !strings.Contains(notes, w) {
				t.Errorf("%v: NOTES.txt lacks %q:\n%s", c.sets, w, notes)
			}
		}
		for _, w := range c.not {
			if strings.Contains(notes, w) {
				t.Errorf("%v: NOTES.txt says %q:\n%s", c.sets, w, notes)
			}
		}
	}
}
