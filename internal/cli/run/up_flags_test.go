package run

import (
	"flag"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/stage"
)

// TestUp_has_every_stage_flag: toolgate up declares every flag of
// services/<stage> but --nats (its NATS server is embedded), so a setting
// of the stages (--ack-wait, --stream-idle-timeout, …) is never missing
// from the one-process run.
func TestUp_has_every_stage_flag(t *testing.T) {
	none := func(string) string { return "" }
	fs := flag.NewFlagSet("stage", flag.ContinueOnError)
	stage.Flags(fs, none, stage.ServiceDefaults())
	up := NewUpFlags(none).FS
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		if f.Name == "nats" {
			if up.Lookup("nats") != nil {
				t.Error("up has --nats, but its NATS server is embedded")
			}
			return
		}
		if up.Lookup(f.Name) == nil {
			t.Errorf("up has no --%s", f.Name)
		}
	})
	for _, name := range []string{"ack-wait", "stream-idle-timeout", "stream-max-events", "repair-endpoint"} {
		if fs.Lookup(name) == nil {
			t.Errorf("the stage flags have no --%s", name)
		}
	}
	if up.Lookup("http").DefValue != "127.0.0.1:8080" || fs.Lookup("http").DefValue != "127.0.0.1:8080" {
		t.Errorf("--http defaults: up %s, stage %s; want 127.0.0.1:8080 for both", up.Lookup("http").DefValue, fs.Lookup("http").DefValue)
	}
}

// TestFlags_build_the_config_main_and_up_run: the flags and their
// TOOLGATE_* variables end up in the stage configuration.
func TestFlags_build_the_config_main_and_up_run(t *testing.T) {
	env := map[string]string{"TOOLGATE_ACK_WAIT": "5s", "TOOLGATE_STREAM_MAX_EVENTS": "7"}
	uf := NewUpFlags(func(k string) string { return env[k] })
	if err := uf.FS.Parse([]string{"--stream-idle-timeout", "3s", "--tolerant-providers", "ollama, gemini"}); err != nil {
		t.Fatal(err)
	}
	f, err := uf.stage()
	if err != nil {
		t.Fatal(err)
	}
	c := f.Config
	if c.Settings.AckWait.String() != "5s" || c.StreamMaxEvents != 7 || c.StreamIdle.String() != "3s" || len(c.TolerantProviders) != 2 || c.SkipEnsure || c.NATSURL != "" {
		t.Errorf("config %+v", c)
	}
}

// Before, the 15-minute approval TTL could not be set on toolgate up.
func TestUp_approval_ttl_flag_and_environment(t *testing.T) {
	for _, c := range []struct {
		env, arg string
		want     time.Duration
		bad      bool
	}{
		{want: approval.DefaultTTL},
		{env: "30m", want: 30 * time.Minute},
		{env: "30m", arg: "2h", want: 2 * time.Hour},
		{arg: "0s", bad: true},
		{arg: "soon", bad: true},
	} {
		uf := NewUpFlags(func(k string) string {
			if k == "TOOLGATE_APPROVAL_TTL" {
				return c.env
			}
			return ""
		})
		var args []string
		if c.arg != "" {
			args = []string{"--approval-ttl", c.arg}
		}
		if err := uf.FS.Parse(args); err != nil {
			t.Fatal(err)
		}
		f, err := uf.stage() // --approval-ttl is a stage flag: services/policy has it too
		got := f.Config.ApprovalTTL
		if c.bad != (err != nil) || (!c.bad && got != c.want) {
			t.Errorf("env %q arg %q: %v, %v; want %v (error %v)", c.env, c.arg, got, err, c.want, c.bad)
		}
	}
}
