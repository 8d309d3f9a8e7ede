package deploy

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/toolgate/toolgate/internal/authz"
	"github.com/toolgate/toolgate/internal/keygen"
	"github.com/toolgate/toolgate/streams"
)

// loadCompose loads docker-compose.yml with the Compose specification's own
// loader (anchors, merges, interpolation and schema validation included),
// with the environment file `toolgate secrets init` makes (composeSecrets).
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	p, err := loadComposeWith(composeSecrets(t))
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return p
}

// loadComposeWith loads docker-compose.yml with the environment files given
// and nothing from the process's environment.
func loadComposeWith(envFiles ...string) (*types.Project, error) {
	opts, err := cli.NewProjectOptions([]string{"../docker-compose.yml"}, cli.WithWorkingDirectory(".."), cli.WithName("toolgate"), cli.WithEnvFiles(envFiles...), cli.WithDotEnv)
	if err != nil {
		return nil, err
	}
	return opts.LoadProject(context.Background())
}

// composeSecrets makes the secrets of compose in a temporary directory
// (toolgate secrets init DIR) and returns its compose.env.
func composeSecrets(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := keygen.Init(dir, authz.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, keygen.ComposeEnv)
}

func TestCompose_every_stage_is_a_service_with_a_readiness_healthcheck(t *testing.T) {
	p := loadCompose(t)
	for _, st := range streams.Names() {
		t.Run(st, func(t *testing.T) {
			s, err := p.GetService(st)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal([]string(s.Command), []string{"/usr/local/bin/" + st}) {
				t.Errorf("command %v", s.Command)
			}
			hc := s.HealthCheck
			if hc == nil || hc.Disable {
				t.Fatal("no healthcheck")
			}
			if got := strings.Join(hc.Test, " "); got != "CMD /usr/local/bin/toolgate probe http://127.0.0.1:8080/readyz" {
				t.Errorf("healthcheck %q, want the toolgate probe of /readyz", got)
			}
			if hc.Interval == nil || time.Duration(*hc.Interval) <= 0 || hc.Retries == nil || *hc.Retries == 0 {
				t.Errorf("healthcheck interval %v retries %v", hc.Interval, hc.Retries)
			}
			if s.Environment["TOOLGATE_NATS_URL"] == nil || *s.Environment["TOOLGATE_NATS_URL"] != "nats://nats:4222" {
				t.Errorf("TOOLGATE_NATS_URL = %v", s.Environment["TOOLGATE_NATS_URL"])
			}
			if s.StopGracePeriod == nil || time.Duration(*s.StopGracePeriod) <= 30*time.Second {
				t.Errorf("stop_grace_period %v, want more than AckWait (30 s) to drain", s.StopGracePeriod)
			}
			if d, ok := s.DependsOn["nats"]; !ok || d.Condition != types.ServiceConditionHealthy {
				t.Errorf("depends_on nats %+v, want service_healthy", d)
			}
			if !s.ReadOnly || !slices.Contains(s.CapDrop, "ALL") {
				t.Errorf("read_only %v cap_drop %v", s.ReadOnly, s.CapDrop)
			}
		})
	}
	x, _ := p.GetService(streams.Execute)
	if x.Environment["TOOLGATE_REDIS_URL"] == nil || x.DependsOn["redis"].Condition != types.ServiceConditionHealthy {
		t.Error("execute neither gets TOOLGATE_REDIS_URL nor waits for a healthy redis")
	}
}

func TestCompose_nats_keeps_jetstream_on_a_volume_and_every_dependency_is_checked(t *testing.T) {
	p := loadCompose(t)
	if _, ok := p.Volumes["nats-data"]; !ok {
		t.Fatalf("volumes %v, want nats-data", p.VolumeNames())
	}
	nats, err := p.GetService("nats")
	if err != nil {
		t.Fatal(err)
	}
	onData := slices.ContainsFunc(nats.Volumes, func(v types.ServiceVolumeConfig) bool {
		return v.Type == types.VolumeTypeVolume && v.Source == "nats-data" && v.Target == "/data"
	})
	if !onData {
		t.Errorf("nats volumes %+v, want nats-data on /data", nats.Volumes)
	}
	for _, name := range []string{"nats", "redis"} {
		s, err := p.GetService(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.HealthCheck == nil || len(s.HealthCheck.Test) == 0 {
			t.Errorf("%s has no healthcheck: stages wait on it", name)
		}
	}
	if _, err := p.GetService("executor"); err != nil {
		t.Errorf("no example executor: %v", err)
	}
}

// Before, compose published NATS on host port 4222, which a machine's own
// NATS server (or toolgate up) often holds, so `up` failed to bind. Now it
// publishes 14222 and 18222 on 127.0.0.1 by default, each settable.
func TestCompose_nats_is_published_on_loopback_beside_the_default_ports(t *testing.T) {
	ports := func(p *types.Project) map[uint32]types.ServicePortConfig {
		t.Helper()
		nats, err := p.GetService("nats")
		if err != nil {
			t.Fatal(err)
		}
		out := map[uint32]types.ServicePortConfig{}
		for _, pc := range nats.Ports {
			if pc.HostIP != "127.0.0.1" {
				t.Errorf("nats port %d published on %q, want 127.0.0.1 only", pc.Target, pc.HostIP)
			}
			out[pc.Target] = pc
		}
		return out
	}
	got := ports(loadCompose(t))
	if got[4222].Published != "14222" || got[8222].Published != "18222" {
		t.Errorf("nats published on %q and %q, want 14222 and 18222 (4222 and 8222 are a local NATS server's)", got[4222].Published, got[8222].Published)
	}
	override := filepath.Join(t.TempDir(), "ports.env")
	if err := os.WriteFile(override, []byte("TOOLGATE_NATS_HOST_PORT=4999\nTOOLGATE_NATS_MONITOR_HOST_PORT=4998\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := loadComposeWith(composeSecrets(t), override)
	if err != nil {
		t.Fatal(err)
	}
	if got := ports(p); got[4222].Published != "4999" || got[8222].Published != "4998" {
		t.Errorf("with TOOLGATE_NATS_HOST_PORT=4999: published %q and %q", got[4222].Published, got[8222].Published)
	}
}
