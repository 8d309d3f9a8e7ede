package streams

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamLeader is one of toolgate's streams (or buckets' streams) as a
// cluster leads it: `toolgate streams leaders` prints them.
type StreamLeader struct {
	Stream string `json:"stream"`
	Leader string `json:"leader"` // "" while none is elected, or not clustered
	// Want is the node SpreadLeaders places its leader on; "" where
	// there is nothing to place (one replica, or not clustered).
	Want     string        `json:"want,omitempty"`
	Replicas []ReplicaPeer `json:"replicas"` // the followers, by name
}

// ReplicaPeer is a follower of a stream: whether it is current, and how
// many operations it is behind.
type ReplicaPeer struct {
	Name    string `json:"name"`
	Current bool   `json:"current"`
	Lag     uint64 `json:"lag,omitempty"`
}

// ownStream reports whether name is toolgate's: a TOOLGATE_ stream or a
// toolgate bucket's KV_toolgate_ stream.
func ownStream(name string) bool {
	return strings.HasPrefix(name, "TOOLGATE_") || strings.HasPrefix(name, "KV_toolgate_")
}

// StreamLeaders lists toolgate's streams with their leaders and followers,
// sorted by name, each with the node SpreadLeaders places its leader on.
func StreamLeaders(ctx context.Context, js jetstream.JetStream) ([]StreamLeader, error) {
	infos, err := ownStreamInfos(ctx, js)
	if err != nil {
		return nil, err
	}
	var out []StreamLeader
	for _, info := range infos {
		s := StreamLeader{Stream: info.Config.Name, Replicas: []ReplicaPeer{}}
		if c := info.Cluster; c != nil {
			s.Leader = c.Leader
			for _, r := range c.Replicas {
				if r != nil {
					s.Replicas = append(s.Replicas, ReplicaPeer{Name: r.Name, Current: r.Current, Lag: r.Lag})
				}
			}
			slices.SortFunc(s.Replicas, func(a, b ReplicaPeer) int { return strings.Compare(a.Name, b.Name) })
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b StreamLeader) int { return strings.Compare(a.Stream, b.Stream) })
	gates, stages, others, err := groupLeaderStreams(ctx, js, infos)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return out, nil // not applied (yet): no plan
	}
	if err != nil || len(gates.Peers) == 0 {
		return out, err
	}
	want := leaderPlan(gates, stages, others)
	for i := range out {
		out[i].Want = want[out[i].Stream]
	}
	return out, nil
}
