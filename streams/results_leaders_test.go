package streams

import (
	"context"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// With P = 3 the results streams are placed like a stage's partitions:
// grouped as one more stage that is not laned, so TOOLGATE_RESULTS and its
// partitions 1 and 2 are led by three different nodes.
func TestLeaderPlan_places_the_results_partitions_on_different_nodes(t *testing.T) {
	nodes := []string{"nats-0", "nats-1", "nats-2"}
	s := DefaultSettings()
	s.Replicas, s.Fair.Partitions = 3, 3
	infos := map[string]*jetstream.StreamInfo{}
	for _, c := range s.StreamConfigs() {
		infos[c.Name] = &jetstream.StreamInfo{Config: c, Cluster: &jetstream.ClusterInfo{
			Leader:   nodes[0],
			Replicas: []*jetstream.PeerInfo{{Name: nodes[1], Current: true}, {Name: nodes[2], Current: true}},
		}}
	}
	// Settled infos: read without a server.
	gates, stages, others, err := groupLeaderStreams(context.Background(), nil, infos)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{StreamResults, ResultsStream(1), ResultsStream(2)}
	i := slices.IndexFunc(stages, func(st leaderStage) bool {
		return len(st.Partitions) > 0 && st.Partitions[0].Name == StreamResults
	})
	if i < 0 {
		t.Fatalf("the results streams are not grouped as a stage's partitions; others %v", others)
	}
	var names []string
	for _, p := range stages[i].Partitions {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, want) || stages[i].Laned {
		t.Fatalf("results stage %v (laned %v), want %v", names, stages[i].Laned, want)
	}
	plan := leaderPlan(gates, stages, others)
	led := map[string]bool{}
	for _, name := range want {
		led[plan[name]] = true
	}
	if len(led) != 3 {
		t.Fatalf("results partitions led by %v: want three nodes", []string{plan[want[0]], plan[want[1]], plan[want[2]]})
	}
}
