package authz

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/tool"
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

func TestRole_client_may_only_publish_ingest(t *testing.T) {
	p, err := Role(Client)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Subscribe) != 0 || p.Responses {
		t.Errorf("the unauthenticated client subscribes to %v (responses %v), want nothing", p.Subscribe, p.Responses)
	}
	// its stream events also as the server maps them to a partition (streams/in_partitions.go)
	if !slices.Equal(p.Publish, []string{streams.SubjectInResponse, streams.InStream("*"), streams.InStream("*") + ".*"}) {
		t.Errorf("the unauthenticated client publishes %v, want ingest only", p.Publish)
	}
}

func TestConfig_every_user_reads_only_its_own_inbox_and_no_one_reads_all_executors(t *testing.T) {
	c := Config{Groups: []Group{{Name: "payments", Tools: []string{"create_invoice", "refund"}}}, Tenants: []string{"acme"}}
	for _, u := range c.Names() {
		p, err := c.Role(u)
		if err != nil {
			t.Fatal(err)
		}
		if p == nil {
			continue // the admin
		}
		for _, s := range p.Subscribe {
			if s == "_INBOX.>" || s == ">" || s == "$SRV.>" || s == "toolgate.>" || strings.HasPrefix(s, "toolgate.exec.>") || s == "toolgate.exec.*" || s == streams.ResultsAll() {
				t.Errorf("%s subscribes to %s", u, s)
			}
			if strings.HasPrefix(s, "_INBOX") && s != InboxPrefix(u)+".>" {
				t.Errorf("%s subscribes to another inbox: %s", u, s)
			}
		}
	}
	p, _ := c.Role(ExecutorUser("payments"))
	if !slices.Contains(p.Subscribe, "toolgate.exec.refund") || slices.Contains(p.Subscribe, "toolgate.exec.get_weather") || !p.Responses {
		t.Errorf("executor-payments: %+v", p)
	}
	// It publishes only to keep its own tools' records of the requests it
	// took (the replay bucket), never to a toolgate subject nor to another
	// group's records.
	if !slices.Contains(p.Publish, "$KV.toolgate_exec_replay.refund.*") {
		t.Errorf("executor-payments may not write its replay records: %v", p.Publish)
	}
	for _, s := range p.Publish {
		if !strings.Contains(s, "KV_toolgate_exec_replay") && !strings.HasPrefix(s, "$KV.toolgate_exec_replay.") ||
			strings.Contains(s, "get_weather") || strings.HasSuffix(s, ">") {
			t.Errorf("executor-payments publishes to %s", s)
		}
	}
	p, _ = c.Role(ProducerUser("acme"))
	if !slices.Contains(p.Subscribe, "toolgate.results.acme.>") || !slices.Contains(p.Subscribe, "toolgate.progress.acme.>") {
		t.Errorf("producer-acme: %+v", p)
	}
	if _, err := c.Role(ExecutorUser("example")); err == nil {
		t.Error("a group the configuration does not have has a role")
	}
}

func TestConfig_Validate_refuses_ambiguous_users_and_grants(t *testing.T) {
	for _, bad := range []Config{
		{Groups: []Group{{Name: "Pay", Tools: []string{"a"}}}},
		{Groups: []Group{{Name: "a_b", Tools: []string{"a"}}}},
		{Groups: []Group{{Name: "p", Tools: []string{">"}}}},
		{Groups: []Group{{Name: "p", Tools: []string{"a.b"}}}},
		{Groups: []Group{{Name: "p"}}},
		{Groups: []Group{{Name: "p", Tools: []string{"a"}}, {Name: "q", Tools: []string{"a"}}}},
		{Groups: []Group{{Name: "p", Tools: []string{"a"}}, {Name: "p", Tools: []string{"b"}}}},
		{Tenants: []string{"acme", "acme"}},
		{Tenants: []string{"ac.me"}},
		{Tenants: []string{"_"}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	g, err := ParseGroups(" payments=create_invoice, refund ;accounts=delete_customer_account;")
	if err != nil || len(g) != 2 || !slices.Equal(g[0].Tools, []string{"create_invoice", "refund"}) || g[1].Name != "accounts" {
		t.Fatalf("ParseGroups = %+v, %v", g, err)
	}
	if _, err := ParseGroups("payments"); err == nil {
		t.Error("a group without tools parsed")
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	if PasswordVar(ExecutorUser("a-b")) != "TOOLGATE_NATS_PASSWORD_EXECUTOR_A_B" {
		t.Errorf("PasswordVar = %s", PasswordVar(ExecutorUser("a-b")))
	}
}

func TestExampleTools_are_the_tools_of_examples(t *testing.T) {
	b, err := os.ReadFile("../../examples/tools.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defs, err := tool.Load("tools.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	if !slices.Equal(names, ExampleTools()) {
		t.Errorf("examples/tools.yaml has %v, ExampleTools %v", names, ExampleTools())
	}
}

// Issue 17 point 1: the policy stage tells a producer that a call waits for
// approval on the response's progress subject, so it may publish progress
// (and only progress: no producer subject, no executor); the stages that
// announce nothing may not.
func TestStage_policy_may_publish_progress_and_only_accumulate_besides(t *testing.T) {
	for _, st := range streams.Names() {
		p, err := Stage(st)
		if err != nil {
			t.Fatal(err)
		}
		may := slices.Contains(p.Publish, streams.ProgressAll())
		if want := st == streams.Policy || st == streams.Accumulate; may != want {
			t.Errorf("%s publishes progress: %v, want %v", st, may, want)
		}
		if st == streams.Policy && (slices.Contains(p.Publish, streams.Exec(">")) || slices.Contains(p.Publish, streams.SubjectInResponse)) {
			t.Errorf("policy publishes %v", p.Publish)
		}
	}
}

// A laned stage's user consumes any durable of its own lanes' stream
// (TOOLGATE_GATE_<STAGE>), whatever L, and of no other stage's; it
// publishes to the lanes of the stages it routes to (and their lanes of
// before their stream, for a rolling upgrade), not to others'.
func TestStageLanes_grants_only_its_own_lane_stream(t *testing.T) {
	p, err := StageLanes(streams.Validate, 2)
	if err != nil {
		t.Fatal(err)
	}
	own := streams.LaneStream(streams.Validate)
	for _, g := range []string{"$JS.API.CONSUMER.MSG.NEXT." + own + ".*", "$JS.API.CONSUMER.INFO." + own + ".*", "$JS.ACK." + own + ".*.>"} {
		if !slices.Contains(p.Publish, g) {
			t.Errorf("validate lacks %s", g)
		}
	}
	for _, s := range p.Publish {
		if strings.Contains(s, "CONSUMER.MSG.NEXT") && s != "$JS.API.CONSUMER.MSG.NEXT."+own+".*" && s != "$JS.API.CONSUMER.MSG.NEXT."+streams.StreamGates+".validate" {
			t.Errorf("validate may pull from %s", s)
		}
		for _, other := range streams.LaneStreams() {
			if other != own && strings.Contains(s, other) {
				t.Errorf("validate is granted %s of another stage's lanes", s)
			}
		}
		if strings.Contains(s, "CONSUMER.CREATE.TOOLGATE_") || strings.Contains(s, "CONSUMER.DELETE.TOOLGATE_") {
			t.Errorf("validate may change durables: %s", s)
		}
	}
	for _, g := range []string{"toolgate.gate.business.l.*", "toolgate.gate.business.*"} {
		if !slices.Contains(p.Publish, g) {
			t.Errorf("validate may not hand calls to business on %s: %v", g, p.Publish)
		}
	}
	if slices.Contains(p.Publish, "toolgate.gate.policy.*") || slices.Contains(p.Publish, "toolgate.gate.policy.l.*") {
		t.Errorf("validate's gate publishes: %v", p.Publish)
	}
	c := Config{Lanes: 2}
	r, err := c.Role(streams.Validate)
	if err != nil || !slices.Equal(r.Publish, p.Publish) {
		t.Errorf("Config.Role does not use its Lanes: %v", err)
	}
}

// Accumulate pulls from its lane durables, interactive and batch
// (accumulate_<index>, accumulate_<index>b), up to --lanes, and from no
// other stage's.
func TestStageLanes_accumulate_pulls_from_its_batch_lanes_too(t *testing.T) {
	p, err := StageLanes(streams.Accumulate, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"accumulate", "accumulate_0", "accumulate_0b", "accumulate_1", "accumulate_1b"} {
		if !slices.Contains(p.Publish, "$JS.API.CONSUMER.MSG.NEXT."+streams.StreamIn+"."+d) {
			t.Errorf("accumulate may not pull from %s", d)
		}
	}
	for _, s := range p.Publish {
		// (TOOLGATE_IN.*: its ordered read-backs of a stream's events)
		if strings.Contains(s, "CONSUMER.MSG.NEXT") && !strings.HasSuffix(s, "."+streams.StreamIn+".accumulate") && !strings.HasSuffix(s, "."+streams.StreamIn+".*") && !strings.Contains(s, ".accumulate_") {
			t.Errorf("accumulate may pull from %s", s)
		}
		if strings.Contains(s, "accumulate_2") {
			t.Errorf("granted a lane past --lanes 2: %s", s)
		}
	}
}
