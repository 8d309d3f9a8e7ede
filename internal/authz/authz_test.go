package authz

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/streams"
)

func TestRoutes_follow_the_call_state_machine(t *testing.T) {
	for _, test := range []struct {
		stage string
		want  []string
	}{
		{streams.Accumulate, []string{streams.Parse}},
		{streams.Parse, []string{streams.Validate, streams.Repair}},
		{streams.Validate, []string{streams.Business, streams.Repair}},
		{streams.Business, []string{streams.Policy}},
		{streams.Policy, []string{streams.Execute}},
		{streams.Repair, []string{streams.Parse}},
		{streams.Execute, nil},
	} {
		t.Run(test.stage, func(t *testing.T) {
			if got := Routes(test.stage); !slices.Equal(got, test.want) {
				t.Errorf("Routes(%s) = %v, want %v", test.stage, got, test.want)
			}
		})
	}
}

func TestStage_only_execute_may_publish_to_executors(t *testing.T) {
	for _, st := range streams.Names() {
		p, err := Stage(st)
		if err != nil {
			t.Fatal(err)
		}
		has := slices.ContainsFunc(p.Publish, func(s string) bool { return strings.HasPrefix(s, "toolgate.exec.") || s == ">" })
		if has != (st == streams.Execute) {
			t.Errorf("stage %s may publish to toolgate.exec.>: %v", st, has)
		}
	}
}

func TestStage_grants_no_wildcard_over_gates_or_the_api(t *testing.T) {
	for _, st := range streams.Names() {
		p, _ := Stage(st)
		for _, s := range append(p.Publish, p.Subscribe...) {
			switch s {
			case ">", "toolgate.>", "toolgate.gate.>", "toolgate.gate.*", "$JS.API.>", "$JS.>", "$KV.>", "_INBOX.>":
				t.Errorf("stage %s is granted %q", st, s)
			}
			if strings.HasPrefix(s, "$JS.API.STREAM.CREATE") || strings.HasPrefix(s, "$JS.API.STREAM.UPDATE") || strings.HasPrefix(s, "$JS.API.STREAM.DELETE") {
				t.Errorf("stage %s may change streams: %q", st, s)
			}
		}
		if !slices.Contains(p.Subscribe, InboxPrefix(st)+".>") || len(p.Subscribe) != 1 {
			t.Errorf("stage %s subscribes to %v, want only its own inbox", st, p.Subscribe)
		}
	}
}

func TestRole_unknown_user_is_an_error(t *testing.T) {
	if _, err := Role("intruder"); err == nil || !strings.Contains(err.Error(), "authz: unknown user") {
		t.Fatalf("err = %v", err)
	}
	if p, err := Role(Admin); err != nil || p != nil {
		t.Fatalf("admin = %v, %v; want unrestricted", p, err)
	}
}
