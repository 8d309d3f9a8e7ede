package run

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

func TestBench_scenarios_flag_picks_all_none_or_named_and_refuses_unknown(t *testing.T) {
	for _, c := range []struct {
		list string
		want string
		err  string
	}{
		{"all", "args-16k,args-256k,parallel-8,invoice-1,limits-2,stream-500", ""},
		{"none", "", ""},
		{"stream-500, args-16k", "stream-500,args-16k", ""},
		{"args-16k,stream", "", `unknown scenario "stream"`},
	} {
		got, err := pickScenarios(c.list)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.list, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.list, err)
		}
		var names []string
		for _, s := range got {
			names = append(names, s.Name)
		}
		if strings.Join(names, ",") != c.want {
			t.Errorf("%q picked %v, want %s", c.list, names, c.want)
		}
	}
}

// A negative --size made the ceiling's payload allocation panic mid-run;
// it is refused before anything starts.
func TestBench_negative_size_or_rate_is_a_usage_error(t *testing.T) {
	for _, args := range [][]string{{"--size", "-1"}, {"--rate", "-5"}, {"--n", "0"}} {
		err := BenchCmd(args)
		if err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Errorf("%v: error %v, want a usage error", args, err)
		}
	}
}

// --nats's companions belong to its modes, and the scenarios that run on
// their own pipeline stay on the embedded server: each is a usage error
// before anything starts.
func TestBench_nats_flags_out_of_their_mode_are_usage_errors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nats-monitor", "http://127.0.0.1:8222"}, "--nats-monitor is for --nats URL"},
		{[]string{"--nats", "embedded-process", "--nats-monitor", "http://127.0.0.1:8222"}, "--nats-monitor is for --nats URL"},
		{[]string{"--nats", "cluster", "--nats-monitor", "http://127.0.0.1:8222"}, "--nats-monitor is for --nats URL"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--nats-server", "/bin/true"}, "--nats-server is for --nats embedded-process or cluster"},
		{[]string{"--nats", "cluster", "--neighbour", "10"}, "are for the steps"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--neighbour", "10"}, "are for the steps"},
		{[]string{"--nats", "embedded-process", "--scenarios", bulkheadNames()}, "are for the steps"},
	} {
		err := BenchCmd(c.args)
		if err == nil || !errors.Is(err, cmdutil.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want a usage error saying %q", c.args, err, c.want)
		}
	}
}
