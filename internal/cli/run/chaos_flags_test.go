package run

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/chaos"
)

// An unknown --topology and a --bin directory without the stage binaries
// are refused before anything starts.
func TestChaos_unknown_topology_or_empty_bin_dir_is_refused(t *testing.T) {
	if err := ChaosCmd([]string{"--topology", "mesh"}); err == nil || !strings.Contains(err.Error(), `--topology "mesh"`) {
		t.Errorf("--topology mesh: error %v, want a usage error naming it", err)
	}
	dir := t.TempDir()
	err := ChaosCmd([]string{"--topology", "cluster", "--bin", dir})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "accumulate")) {
		t.Errorf("--bin %s (empty): error %v, want one naming the missing accumulate binary", dir, err)
	}
}

// A negative soak or a zero sampling interval is refused before anything
// starts.
func TestChaos_bad_rss_flags_are_refused(t *testing.T) {
	for _, args := range [][]string{{"--soak", "-1m"}, {"--rss-every", "0s"}, {"--rss-after", "-5s"}} {
		if err := ChaosCmd(args); err == nil || !strings.Contains(err.Error(), "--rss-every must be positive") {
			t.Errorf("%v: error %v, want a usage error", args, err)
		}
	}
}

// --partitions above 1 needs the cluster topology, and at most
// streams.MaxPartitions; refused before anything starts.
func TestChaos_partitions_need_the_cluster_topology(t *testing.T) {
	for _, args := range [][]string{{"--partitions", "2"}, {"--topology", "cluster", "--partitions", "0"}, {"--topology", "cluster", "--partitions", "65"}} {
		if err := ChaosCmd(args); err == nil || !strings.Contains(err.Error(), "--partitions") {
			t.Errorf("%v: error %v, want a usage error naming --partitions", args, err)
		}
	}
}

// The cluster chaos run runs with P > 1 unless told otherwise (issue 37),
// and one server with P = 1; a given --partitions is kept.
func TestChaos_cluster_runs_partitioned_by_default(t *testing.T) {
	for _, c := range []struct {
		given    bool
		topology string
		parts    int
		want     int
	}{
		{false, chaos.TopologyCluster, 1, clusterPartitions},
		{false, chaos.TopologySingle, 1, 1},
		{true, chaos.TopologyCluster, 1, 1},
		{true, chaos.TopologyCluster, 2, 2},
	} {
		if got := chaosPartitions(c.given, c.topology, c.parts); got != c.want {
			t.Errorf("given %v, %s, --partitions %d: P = %d, want %d", c.given, c.topology, c.parts, got, c.want)
		}
	}
	if clusterPartitions < 2 {
		t.Fatalf("clusterPartitions = %d: the cluster run must be partitioned", clusterPartitions)
	}
}
