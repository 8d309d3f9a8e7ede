package streams

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/pkg/wire"
)

// On a three-node cluster with R3 settings every gate stream (TOOLGATE_GATES,
// each laned stage's TOOLGATE_GATE_<STAGE>, TOOLGATE_GATE_EXECUTE) is a Raft
// group of its own, so its leader can sit on any node: placed by
// SpreadLeaders (a leader step-down naming the preferred server), the leaders are
// on all three, and each stage's lane hops are stored by its own stream's
// leader. With every hop in TOOLGATE_GATES one node's leader stored them
// all. Where the servers put them by themselves is uneven, so the test
// first puts every leader on node 0 and then has SpreadLeaders move them:
// a second spread moves nothing.
//
// It runs with P = 3 partitions (partitions.go): each partitioned stage's
// three partition streams are led by the three nodes, and so are the
// three results streams, the executors' three replay buckets and
// TOOLGATE_RESPONSES' three partitions, and a hop of partition 2 is stored by
// partition 2's stream.
func TestCluster_gate_streams_have_a_leader_each_spread_over_the_nodes(t *testing.T) {
	servers := testenv.RunJetStreamCluster(t)
	nc, js := testenv.Connect(t, servers[0])
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := DefaultSettings()
	s.Replicas = 3
	const parts = 3
	s.Fair = Fair{Lanes: 2, Partitions: parts}
	testenv.Eventually(t, 60*time.Second, 200*time.Millisecond, func() error { return Ensure(ctx, js, s) })
	gateStreams := []string{StreamGates} // then each stage's partitions in a row, so placed on the three nodes
	for _, stage := range PartitionedStages() {
		for p := range parts {
			gateStreams = append(gateStreams, PartitionStream(stage, p))
		}
	}
	var resultsStreams, replayStreams []string // placed after the gate streams, each like a stage's partitions
	for p := range parts {
		resultsStreams = append(resultsStreams, ResultsStream(p))
		replayStreams = append(replayStreams, "KV_"+ExecReplayBucket(p))
	}
	var responsesStreams []string // then TOOLGATE_RESPONSES' partitions, likewise (claimed_partitions.go)
	for k := range parts {
		responsesStreams = append(responsesStreams, ResponsesStream(k))
	}
	planned := append(append(append(slices.Clone(gateStreams), resultsStreams...), replayStreams...), responsesStreams...)
	leader := func(name string) (string, error) {
		st, err := js.Stream(ctx, name)
		if err != nil {
			return "", err
		}
		info, err := st.Info(ctx)
		if err != nil {
			return "", err
		}
		if info.Config.Replicas != 3 || info.Cluster == nil || info.Cluster.Leader == "" {
			return "", fmt.Errorf("%s: replicas %d, cluster %+v", name, info.Config.Replicas, info.Cluster)
		}
		return info.Cluster.Leader, nil
	}
	// Every gate stream led by node 0 first, so the spread below has to
	// move them whatever the servers chose.
	pile := servers[0].Name()
	for _, name := range gateStreams {
		testenv.Eventually(t, 30*time.Second, 200*time.Millisecond, func() error {
			l, err := leader(name)
			if err != nil || l == pile {
				return err
			}
			req, _ := json.Marshal(map[string]any{"placement": map[string]string{"preferred": pile}})
			if _, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+name, req, 5*time.Second); err != nil {
				return err
			}
			return fmt.Errorf("%s led by %s, want %s", name, l, pile)
		})
	}
	moves, err := SpreadLeaders(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	moved := 0
	for i, m := range moves {
		t.Log(m)
		names = append(names, m.Stream)
		if m.Err != "" || m.After != m.Want || (i < len(gateStreams) && m.Before != pile) {
			t.Errorf("%+v: want it led by its node after (and by %s before, a gate stream)", m, pile)
		}
		if m.Moved() {
			moved++
		}
	}
	// The gate streams first, in their order, then the results' and the
	// executors' replay partitions, then the others: the input first, the
	// buckets' streams among them.
	if len(names) < len(planned)+1 || !slices.Equal(names[:len(planned)], planned) ||
		names[len(planned)] != StreamIn || !slices.Contains(names, "KV_"+BucketCalls) || moved == 0 {
		t.Fatalf("moves of %v (%d moved), want one per gate stream, results, replay and claimed partition %v, then the others", names, moved, planned)
	}
	again, err := SpreadLeaders(ctx, js) // placed: a second spread moves nothing
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range again {
		if m.Before != m.Want || m.After != m.Want || m.Moved() {
			t.Errorf("second spread: %+v, want it left where it was", m)
		}
	}
	if len(again) != len(moves) {
		t.Errorf("second spread: %d streams, want %d", len(again), len(moves))
	}
	// A step-down the server refuses (no such peer) is tried a few
	// times, then reported with the stream left where it was: no error.
	m, err := moveLeader(ctx, js, StreamGates, "nats-9")
	if err != nil || m.Err == "" || m.After != m.Before || m.Moved() {
		t.Errorf("a refused step-down: %+v, %v; want it reported, the leader kept, no error", m, err)
	}
	t.Log(m)
	nodes := map[string]bool{}
	for _, name := range gateStreams {
		l, err := leader(name)
		if err != nil {
			t.Fatal(err)
		}
		nodes[l] = true
	}
	if len(nodes) != len(servers) {
		t.Fatalf("gate streams led by %d nodes, want %d", len(nodes), len(servers))
	}
	partitionsOf := [][]string{resultsStreams, replayStreams, responsesStreams}
	for _, stage := range PartitionedStages() {
		var names []string
		for p := range parts {
			names = append(names, PartitionStream(stage, p))
		}
		partitionsOf = append(partitionsOf, names)
	}
	for _, names := range partitionsOf { // a stage's partitions, the results', the replay buckets', the claimed partitions': one leader per node
		led := map[string]string{}
		for _, name := range names {
			l, err := leader(name)
			if err != nil {
				t.Fatal(err)
			}
			if other, ok := led[l]; ok {
				t.Fatalf("%s and %s are both led by %s", other, name, l)
			}
			led[l] = name
		}
	}
	// Each stage's lane hops are its own stream's, led where it was placed.
	for _, st := range Table() {
		if !st.Laned {
			continue
		}
		if _, err := js.Publish(ctx, GateLane(st.Name, "1b"), []byte("hop"), jetstream.WithRetryAttempts(20)); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, PartitionGateLane(st.Name, "1b", 2), []byte("hop"), jetstream.WithRetryAttempts(20)); err != nil {
			t.Fatal(err)
		}
	}
	var stored []string
	for _, name := range LaneStreams() {
		stored = append(stored, name, name+"_2")
	}
	for _, name := range append([]string{StreamGates}, stored...) {
		want := uint64(1)
		if name == StreamGates {
			want = 0
		}
		testenv.Eventually(t, 10*time.Second, 50*time.Millisecond, func() error {
			st, err := js.Stream(ctx, name)
			if err != nil {
				return err
			}
			info, err := st.Info(ctx)
			if err != nil {
				return err
			}
			if info.State.Msgs != want {
				return fmt.Errorf("%s holds %d hops, want %d", name, info.State.Msgs, want)
			}
			return nil
		})
	}
	// Once the streams have stored planTraffic messages the plan weighs
	// each by its last sequence, read from the cluster's stream info: the
	// claimed responses' stream what it took, the idle input nothing.
	for i := range planTraffic {
		if _, err := js.PublishAsync(wire.InTenantClaimed("acme", fmt.Sprintf("r%d", i)), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		t.Fatal("the claimed responses were not all stored")
	}
	_, _, others, err := leaderStreams(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range others {
		if (s.Name == StreamResponses && s.Stored != planTraffic) || (s.Name == StreamIn && s.Stored != 0) {
			t.Errorf("%s stored %d, want %d in TOOLGATE_RESPONSES and 0 in TOOLGATE_IN", s.Name, s.Stored, planTraffic)
		}
	}
}
