package streams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Leaders of toolgate's streams on a cluster (issue 37, docs/design/layout.md
// "Partitions"). Each stream of a NATS cluster is a Raft group with one
// leader, which orders, stores first and delivers its messages; the
// servers place leaders by themselves, unevenly (one node led 55–57 % of
// the hops at P = 4). SpreadLeaders moves them where leaderPlan says, by a
// leader step-down that names the preferred server (nats-server 2.11).

// LeaderMove is what SpreadLeaders found and did for one stream.
type LeaderMove struct {
	Stream string `json:"stream"`
	Before string `json:"before"` // its leader before
	Want   string `json:"want"`   // the node the plan gives it
	After  string `json:"after"`  // its leader after ("" if none was seen)
	// Err says why it is not led by Want: the server refused the
	// step-down, or the election went elsewhere, each time it was tried.
	Err string `json:"error,omitempty"`
}

// Moved reports whether the stream's leader was moved to its node.
func (m LeaderMove) Moved() bool { return m.Before != m.Want && m.After == m.Want }

// String is the move as a line.
func (m LeaderMove) String() string {
	switch {
	case m.Err != "":
		return fmt.Sprintf("%s: led by %s, not moved to %s: %s", m.Stream, m.After, m.Want, m.Err)
	case m.Moved():
		return fmt.Sprintf("%s: leader moved from %s to %s", m.Stream, m.Before, m.After)
	}
	return fmt.Sprintf("%s: led by %s, as planned", m.Stream, m.After)
}

// SpreadTimeout bounds a whole SpreadLeaders: its callers (streams apply
// and leaders, the bench and chaos on a cluster) give it this long.
const SpreadTimeout = 3 * time.Minute

// Tally counts the moves that moved a leader to its node, and returns the
// ones whose leader is not where planned (Err set).
func Tally(moves []LeaderMove) (moved int, astray []LeaderMove) {
	for _, m := range moves {
		if m.Moved() {
			moved++
		}
		if m.Err != "" {
			astray = append(astray, m)
		}
	}
	return moved, astray
}

// stepDownTries is how often a step-down is asked before the stream is
// reported as not moved; stepDownWait how long each waits for the new
// leader.
const (
	stepDownTries = 3
	stepDownWait  = 2 * time.Second
	settleWait    = 5 * time.Second
)

// SpreadLeaders moves the leaders of toolgate's streams over the
// cluster's nodes as leaderPlan places them: the gate streams
// (TOOLGATE_GATES and each partitioned stage's partition streams) first,
// then the others (TOOLGATE_IN, _RESULTS, the buckets' streams, ...). It
// returns one LeaderMove per stream, in the plan's order. A stream already
// led by its node is not touched, so a second call moves nothing. On a
// server that is not clustered, or with streams of one replica, there is
// nothing to place: no moves, no error. A step-down the server refuses, or
// an election that goes elsewhere, is tried again a few times and then
// reported in the move's Err; only failing to read the streams is an
// error.
func SpreadLeaders(ctx context.Context, js jetstream.JetStream) ([]LeaderMove, error) {
	gates, stages, others, err := leaderStreams(ctx, js)
	if err != nil || len(gates.Peers) == 0 {
		return nil, err
	}
	want := leaderPlan(gates, stages, others)
	var moves []LeaderMove
	for _, s := range append(append([]leaderStream{gates}, flatten(stages)...), others...) {
		if want[s.Name] == "" {
			continue // one replica
		}
		m, err := moveLeader(ctx, js, s.Name, want[s.Name])
		if err != nil {
			return moves, err
		}
		moves = append(moves, m)
	}
	return moves, nil
}

// leaderStreams reads the peers of toolgate's streams from one listing
// (ownStreamInfos): the gate streams, and the others in otherStreamOrder.
// A stream of one replica, or on a server that is not clustered, has none.
func leaderStreams(ctx context.Context, js jetstream.JetStream) (gates leaderStream, stages []leaderStage, others []leaderStream, err error) {
	infos, err := ownStreamInfos(ctx, js)
	if err != nil {
		return gates, nil, nil, err
	}
	return groupLeaderStreams(ctx, js, infos)
}

// ownStreamInfos lists toolgate's streams (ownStream) with their info, by
// name, in one listing.
func ownStreamInfos(ctx context.Context, js jetstream.JetStream) (map[string]*jetstream.StreamInfo, error) {
	infos := map[string]*jetstream.StreamInfo{}
	l := js.ListStreams(ctx)
	for info := range l.Info() {
		if ownStream(info.Config.Name) {
			infos[info.Config.Name] = info
		}
	}
	if err := l.Err(); err != nil {
		return nil, fmt.Errorf("streams: list streams: %w", err)
	}
	return infos, nil
}

// groupLeaderStreams sorts infos into the plan's gate streams, partitioned
// stages (partition 0 first, then p >= 1 in order of p; the results
// streams and then the executors' replay buckets last, each as one more
// stage, when there are partitions of them) and others; a
// stream whose listed info is not yet settled (settled) is read again
// until it is, or until one common deadline.
func groupLeaderStreams(ctx context.Context, js jetstream.JetStream, infos map[string]*jetstream.StreamInfo) (gates leaderStream, stages []leaderStage, others []leaderStream, err error) {
	deadline := time.Now().Add(settleWait) // one wait for all the streams
	seen := map[string]bool{}
	peers := func(name string) (leaderStream, error) {
		info, ok := infos[name]
		if !ok {
			return leaderStream{}, fmt.Errorf("streams: stream %s: %w", name, jetstream.ErrStreamNotFound)
		}
		if !settled(info) {
			if info, err = settledInfo(ctx, js, name, deadline); err != nil {
				return leaderStream{}, err
			}
		}
		seen[name] = true
		return leaderStream{Name: name, Peers: streamPeers(info), Stored: info.State.LastSeq}, nil
	}
	partitionsOf := func(names []string, laned bool) (leaderStage, error) {
		st := leaderStage{Laned: laned}
		for _, name := range names {
			s, err := peers(name)
			if err != nil {
				return st, err
			}
			st.Partitions = append(st.Partitions, s)
		}
		return st, nil
	}
	if gates, err = peers(StreamGates); err != nil {
		return gates, nil, nil, err
	}
	for _, stage := range PartitionedStages() {
		names := []string{PartitionStream(stage, 0)}
		var ps []int
		for name := range infos {
			if p, ok := partitionStreamIndex(stage, name); ok {
				ps = append(ps, p)
			}
		}
		slices.Sort(ps)
		for _, p := range ps {
			names = append(names, PartitionStream(stage, p))
		}
		st, err := partitionsOf(names, Laned(stage))
		if err != nil {
			return gates, nil, nil, err
		}
		stages = append(stages, st)
	}
	// The results, the executors' replay buckets, TOOLGATE_RESPONSES
	// (claimed_partitions.go) and TOOLGATE_IN (in_partitions.go), when
	// partitioned: placed like a stage's partitions.
	for _, names := range [][]string{resultsPartitionStreams(infos), replayPartitionStreams(infos), responsesPartitionStreams(infos), inPartitionStreams(infos)} {
		if len(names) > 1 {
			st, err := partitionsOf(names, false)
			if err != nil {
				return gates, nil, nil, err
			}
			stages = append(stages, st)
		}
	}
	var rest []string
	for name := range infos {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	for _, name := range otherStreamOrder(rest) {
		s, err := peers(name)
		if err != nil {
			return gates, nil, nil, err
		}
		others = append(others, s)
	}
	return gates, stages, others, nil
}

// streamPeers are the servers holding a replica of a stream, its leader
// included, sorted; none without a cluster or without other replicas.
func streamPeers(info *jetstream.StreamInfo) []string {
	if info.Cluster == nil || len(info.Cluster.Replicas) == 0 {
		return nil
	}
	var out []string
	if info.Cluster.Leader != "" {
		out = append(out, info.Cluster.Leader)
	}
	for _, r := range info.Cluster.Replicas {
		if r != nil && r.Name != "" && !slices.Contains(out, r.Name) {
			out = append(out, r.Name)
		}
	}
	slices.Sort(out)
	return out
}

// settledInfo is name's info once it has a leader and all its replicas
// (a stream just created elects its leader a moment later), or as it is
// at deadline: a node down leaves a replica out.
func settledInfo(ctx context.Context, js jetstream.JetStream, name string, deadline time.Time) (*jetstream.StreamInfo, error) {
	for {
		info, err := streamInfo(ctx, js, name)
		if err != nil {
			return nil, err
		}
		if settled(info) || time.Now().After(deadline) {
			return info, nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// settled reports whether info shows its stream's leader and all its
// replicas (or the stream has no cluster to wait for).
func settled(info *jetstream.StreamInfo) bool {
	c := info.Cluster
	return c == nil || info.Config.Replicas <= 1 || (c.Leader != "" && len(c.Replicas) >= info.Config.Replicas-1)
}

func streamInfo(ctx context.Context, js jetstream.JetStream, name string) (*jetstream.StreamInfo, error) {
	st, err := js.Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("streams: stream %s: %w", name, err)
	}
	return st.CachedInfo(), nil
}

// moveLeader asks name's leader to step down in favour of want until want
// leads it, at most stepDownTries times.
func moveLeader(ctx context.Context, js jetstream.JetStream, name, want string) (LeaderMove, error) {
	m := LeaderMove{Stream: name, Want: want}
	info, err := streamInfo(ctx, js, name)
	if err != nil { // read a moment ago: reported, the others still placed
		m.Err = err.Error()
		return m, ctx.Err()
	}
	if info.Cluster != nil {
		m.Before = info.Cluster.Leader
	}
	if m.Before == "" { // an election under way: its outcome is where it was
		m.Before = leaderOf(ctx, js, name, "", stepDownWait)
	}
	m.After = m.Before
	var why []string
	for try := 0; m.After != want && try < stepDownTries; try++ {
		if try > 0 {
			if err := sleep(ctx, time.Duration(try)*250*time.Millisecond); err != nil {
				return m, err
			}
		}
		if err := stepDown(ctx, js, name, want); err != nil {
			why = append(why, err.Error())
			m.After = leaderOf(ctx, js, name, "", time.Second)
			continue
		}
		m.After = leaderOf(ctx, js, name, want, stepDownWait)
		if m.After != want {
			why = append(why, "elected "+orNone(m.After))
		}
	}
	if m.After != want {
		m.Err = strings.Join(slices.Compact(why), "; ")
	}
	return m, ctx.Err()
}

// leaderOf is name's leader once one is elected, polled until it is want
// (any leader when want is "") or wait has passed; "" if none was seen.
func leaderOf(ctx context.Context, js jetstream.JetStream, name, want string, wait time.Duration) string {
	deadline, l := time.Now().Add(wait), ""
	for {
		ictx, cancel := context.WithTimeout(ctx, time.Second)
		info, err := streamInfo(ictx, js, name)
		cancel()
		if err == nil && info.Cluster != nil {
			l = info.Cluster.Leader
		}
		if (l != "" && (want == "" || l == want)) || time.Now().After(deadline) || sleep(ctx, 50*time.Millisecond) != nil {
			return l
		}
	}
}

// stepDown asks the leader of name to step down with want as the preferred
// next leader ($JS.API.STREAM.LEADER.STEPDOWN.<name>, nats-server 2.11).
func stepDown(ctx context.Context, js jetstream.JetStream, name, want string) error {
	req, err := json.Marshal(map[string]any{"placement": map[string]string{"preferred": want}})
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, stepDownWait)
	defer cancel()
	msg, err := js.Conn().RequestWithContext(rctx, apiPrefix(js)+"STREAM.LEADER.STEPDOWN."+name, req)
	if err != nil {
		return fmt.Errorf("step-down: %w", err)
	}
	var resp struct {
		Error *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
		Success bool `json:"success"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("step-down: %w", err)
	}
	if resp.Error != nil {
		return fmt.Errorf("step-down refused: %s (%d)", resp.Error.Description, resp.Error.ErrCode)
	}
	if !resp.Success {
		return errors.New("step-down not done")
	}
	return nil
}

// apiPrefix is the JetStream API prefix js sends its requests to.
func apiPrefix(js jetstream.JetStream) string {
	o := js.Options()
	switch {
	case o.Domain != "":
		return "$JS." + o.Domain + ".API."
	case o.APIPrefix != "":
		return strings.TrimSuffix(o.APIPrefix, ".") + "."
	}
	return jetstream.DefaultAPIPrefix
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func orNone(s string) string {
	if s == "" {
		return "no leader"
	}
	return s
}
