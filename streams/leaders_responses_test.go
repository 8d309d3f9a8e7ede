package streams

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// TOOLGATE_RESPONSES' partitions are placed like a stage's: at P = nodes
// each node leads one of them, even where balancing the stores alone
// would put the light ones together beside the heavy input and results.
func TestLeaderPlan_places_the_claimed_partitions_each_on_another_node(t *testing.T) {
	info := func(name string) *jetstream.StreamInfo {
		return &jetstream.StreamInfo{Config: jetstream.StreamConfig{Name: name, Replicas: 3},
			Cluster: &jetstream.ClusterInfo{Leader: "a", Replicas: []*jetstream.PeerInfo{{Name: "b"}, {Name: "c"}}}}
	}
	infos := map[string]*jetstream.StreamInfo{}
	for _, name := range []string{StreamGates, StreamIn, StreamResults, StreamResponses, ResponsesStream(1), ResponsesStream(2)} {
		infos[name] = info(name)
	}
	infos[StreamIn].State.LastSeq, infos[StreamResults].State.LastSeq = 5000, 5000
	for k := range 3 {
		infos[ResponsesStream(k)].State.LastSeq = 100
	}
	for _, stage := range PartitionedStages() {
		infos[PartitionStream(stage, 0)] = info(PartitionStream(stage, 0))
	}
	gates, stages, others, err := groupLeaderStreams(context.Background(), nil, infos)
	if err != nil {
		t.Fatal(err)
	}
	want := leaderPlan(gates, stages, others)
	led := map[string]bool{}
	for k := range 3 {
		led[want[ResponsesStream(k)]] = true
	}
	if len(led) != 3 {
		t.Fatalf("the claimed partitions are led by %v, want three nodes (plan %v)", led, want)
	}
}
