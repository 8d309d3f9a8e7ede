package authz

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/streams"
)

func TestConsole_reads_and_decides_but_changes_no_topology_and_runs_no_tool(t *testing.T) {
	p, err := Role(Console)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(Names(), Console) {
		t.Fatalf("users %v lack %s: deployments would have no password for it", Names(), Console)
	}
	for _, s := range p.Publish {
		switch {
		case s == ">", s == "$JS.API.>", s == "$JS.>", s == "$KV.>", s == "toolgate.>", s == "toolgate.gate.>":
			t.Errorf("granted %q", s)
		case strings.HasPrefix(s, "toolgate.exec."):
			t.Errorf("may call an executor: %q", s)
		case strings.Contains(s, "STREAM.CREATE"), strings.Contains(s, "STREAM.UPDATE"), strings.Contains(s, "STREAM.DELETE"), strings.Contains(s, "STREAM.PURGE"):
			t.Errorf("may change streams: %q", s)
		case strings.Contains(s, "CONSUMER.DURABLE.CREATE"):
			t.Errorf("may create a durable: %q", s)
		case strings.HasPrefix(s, "$KV.") && s != "$KV."+streams.BucketApprovals+".>" && s != "$KV."+streams.BucketCalls+".>":
			t.Errorf("may write bucket %q", s)
		}
		for _, st := range streams.Table() {
			if strings.HasPrefix(s, "$JS.API.CONSUMER.MSG.NEXT."+st.Stream+"."+st.Consumer.Name) || strings.HasPrefix(s, "$JS.ACK.") {
				t.Errorf("may take work from stage %s: %q", st.Name, s)
			}
		}
	}
	if !slices.Equal(p.Subscribe, []string{InboxPrefix(Console) + ".>"}) || p.Responses {
		t.Errorf("subscribes to %v (responses %v), want only its own inbox", p.Subscribe, p.Responses)
	}
}
