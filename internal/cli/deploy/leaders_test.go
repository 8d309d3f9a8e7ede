package deploy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/cli/clitest"
	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/streams"
)

// `toolgate streams apply` on a three-node cluster places the streams'
// leaders (streams.SpreadLeaders) and `streams leaders` shows each led by
// its planned node; `streams leaders --spread` then moves nothing.
// On one server neither has leaders to place.
func TestStreamsLeaders_apply_spreads_them_on_a_cluster_and_leaders_shows_them(t *testing.T) {
	t.Setenv("TOOLGATE_SECRETS", t.TempDir()) // no password: the test servers have no users
	servers := testenv.RunJetStreamCluster(t)
	url := servers[0].ClientURL()
	out, code := clitest.RunCmd(t, nil, StreamsCmd, "apply", "--nats", url, "--replicas", "3", "--lanes", "2", "--partitions", "3")
	if code != 0 || !strings.Contains(out, "streams placed over the nodes, 0 not where planned") || !strings.Contains(out, "leader moved") {
		t.Fatalf("streams apply: exit %d\n%s", code, out)
	}
	out, code = clitest.RunCmd(t, nil, StreamsCmd, "leaders", "--nats", url, "--json", "--spread")
	var ls []streams.StreamLeader
	if err := json.Unmarshal([]byte(out[strings.Index(out, "["):]), &ls); code != 0 || err != nil {
		t.Fatalf("streams leaders --json: exit %d, %v\n%s", code, err, out)
	}
	if strings.Contains(out, "leader moved") {
		t.Errorf("a second spread moved leaders:\n%s", out)
	}
	nodes := map[string]int{}
	for _, l := range ls {
		nodes[l.Leader]++
		if l.Want == "" || l.Leader != l.Want || len(l.Replicas) != 2 {
			t.Errorf("%+v: want it led by its planned node, with two followers", l)
		}
	}
	if len(ls) < 19 || len(nodes) != 3 {
		t.Errorf("%d streams led by %v; want the 19 gate streams and the others, led by all 3 nodes", len(ls), nodes)
	}
	out, code = clitest.RunCmd(t, nil, StreamsCmd, "leaders", "--nats", url)
	if code != 0 || !strings.Contains(out, "STREAM") || !strings.Contains(out, streams.StreamGates) || strings.Contains(out, "not yet") {
		t.Fatalf("streams leaders: exit %d\n%s", code, out)
	}
}

func TestStreamsLeaders_on_one_server_there_is_nothing_to_place(t *testing.T) {
	t.Setenv("TOOLGATE_SECRETS", t.TempDir())
	url := testenv.RunJetStream(t).ClientURL()
	out, code := clitest.RunCmd(t, nil, StreamsCmd, "apply", "--nats", url, "--partitions", "2")
	if code != 0 || strings.Contains(out, "leader") {
		t.Fatalf("streams apply: exit %d\n%s", code, out)
	}
	out, code = clitest.RunCmd(t, nil, StreamsCmd, "leaders", "--nats", url, "--spread")
	if code != 0 || !strings.Contains(out, streams.StreamGates) || !strings.Contains(out, "one server (not clustered), nothing to place") || strings.Contains(out, "moved") {
		t.Fatalf("streams leaders --spread: exit %d\n%s", code, out)
	}
}
