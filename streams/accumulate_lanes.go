package streams

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Accumulate's fairness lanes (issue 37). TOOLGATE_IN is a limits stream
// that keeps what producers published under their own subjects (claims,
// read-backs and evidence use them), so its lanes are not subjects: each
// lane index that carries a listed tenant has two durables, accumulate_<idx>
// for those tenants' interactive input (toolgate.in.t.<tenant>.response
// and .stream.>) and accumulate_<idx>b for their batch responses
// (toolgate.in.t.<tenant>.batch), read as one lane group, interactive
// first, batch keeping its floor (worker.Share), as the gate stages' lanes
// are. The main durable keeps reading every subject (the legacy shared
// subjects, tenants not listed, anything else under a tenant's prefix) and
// acknowledges, without handling, what a lane owns: a listed tenant's input
// stored at or after the sequence its lane started owning it
// (AccumulateOwner). A stream's events share their tenant's subject, so
// they stay in one lane.
//
// A lane starts owning a tenant at the stream's next sequence when it is
// applied (the key AccumulateStartKey+tenant in the lane durable's
// metadata, kept across applies; each of the two durables has its own):
// what was stored before is the main durable's, so nothing is handled
// twice when a list is turned on, a tenant added, or the batch durables
// added to lanes that had none (a .batch input stored before its batch
// durable existed is the main durable's). A tenant taken off the list
// should have no accumulate backlog (docs/scaling.md): the main durable
// skipped what its lane had.

// AccumulateStartKey prefixes the metadata key, in an accumulate lane
// durable, of the stream sequence from which the lane owns a tenant's
// input (its subject token follows).
const AccumulateStartKey = "toolgate_from_"

// AccumulateLane is the durable of accumulate's lane index idx for its
// tenants' interactive input (their .response and .stream subjects).
func AccumulateLane(idx int) string { return Accumulate + "_" + strconv.Itoa(idx) }

// AccumulateBatchLane is the durable of accumulate's lane index idx for its
// tenants' batch responses (wire.InTenantBatch).
func AccumulateBatchLane(idx int) string { return AccumulateLane(idx) + "b" }

// accumulateLaneTenants maps each lane index that carries a listed tenant
// to those tenants' subject tokens, in list order.
func (f Fair) accumulateLaneTenants() map[int][]string {
	if f.LaneCount() == 0 {
		return nil
	}
	out := map[int][]string{}
	seen := map[string]bool{}
	for _, t := range f.Tenants {
		tok := wire.TenantToken(t)
		if seen[tok] || tok == wire.NoTenant {
			continue
		}
		seen[tok] = true
		idx := f.LaneIndex(t)
		out[idx] = append(out[idx], tok)
	}
	return out
}

// AccumulateClaimed is accumulate's main durable on TOOLGATE_RESPONSES
// (claimed.go): every claimed subject, as Accumulate is on TOOLGATE_IN.
const AccumulateClaimed = Accumulate + "_r"

// AccumulateClaimedLane is the durable of accumulate's lane index idx on
// TOOLGATE_RESPONSES, for its tenants' claimed whole responses.
func AccumulateClaimedLane(idx int) string { return AccumulateLane(idx) + "r" }

// accumulateClaimed reports whether durable, one of accumulate's, reads
// TOOLGATE_RESPONSES.
func accumulateClaimed(durable string) bool {
	idx, ok := strings.CutPrefix(durable, Accumulate+"_")
	idx, claimed := strings.CutSuffix(idx, "r")
	if !ok || !claimed {
		return false
	}
	_, err := strconv.Atoi(idx)
	return durable == AccumulateClaimed || err == nil
}

// accumulateLaneConsumers are accumulate's durables besides its main one:
// its main durable on TOOLGATE_RESPONSES, then its lanes (accumulateLanes).
func (s Settings) accumulateLaneConsumers(st Stage) []Consumer {
	c := st.Consumer
	c.Name, c.Stream, c.Subject, c.Subjects = AccumulateClaimed, StreamResponses, InClaimedAll(), nil
	if s.zeroForms() { // and partition 0 of the mapped subjects (claimed_partitions.go)
		c.Subject, c.Subjects = "", []string{InClaimedAll(), InClaimedPartition(0)}
	}
	c.Description = "toolgate accumulate gate: claimed whole responses"
	return append([]Consumer{c}, s.accumulateLanes(st)...)
}

// accumulatePartitionConsumers are accumulate's durables in claimed
// partition k >= 1 (ResponsesStream(k)): its main claimed durable and its
// claimed lane durables, under the same names as in TOOLGATE_RESPONSES,
// on that partition's subjects.
func (s Settings) accumulatePartitionConsumers(st Stage, k int) []Consumer {
	if k <= 0 {
		return nil
	}
	suffix := "." + strconv.Itoa(k)
	c := st.Consumer
	c.Name, c.Stream, c.Subject, c.Subjects = AccumulateClaimed, ResponsesStream(k), InClaimedPartition(k), nil
	c.Description = "toolgate accumulate gate: claimed whole responses, partition " + strconv.Itoa(k)
	out := []Consumer{c}
	for _, l := range s.accumulateLanes(st) {
		if !accumulateClaimed(l.Name) {
			continue
		}
		l.Stream, l.Subjects = ResponsesStream(k), nil
		for _, tok := range s.Fair.accumulateLaneTenants()[laneIndexOf(l.Name)] {
			l.Subjects = append(l.Subjects, wire.InTenantPrefix+tok+"."+wire.InTenantClaimedRest+"*"+suffix)
		}
		l.Description += ", partition " + strconv.Itoa(k)
		out = append(out, l)
	}
	return out
}

// laneIndexOf is idx of accumulate's lane durable AccumulateLane(idx),
// AccumulateBatchLane(idx) or AccumulateClaimedLane(idx).
func laneIndexOf(durable string) int {
	rest, _ := strings.CutPrefix(durable, Accumulate+"_")
	idx, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSuffix(rest, "r"), "b"))
	return idx
}

// accumulateLanes are accumulate's lane durables: for each lane index that
// carries a listed tenant, its interactive durable (filtering on those
// tenants' whole-response and stream subjects), its batch durable (on
// their batch subjects) and its claimed durable (on their claimed
// subjects, in TOOLGATE_RESPONSES), with the limits of the main durable.
func (s Settings) accumulateLanes(st Stage) []Consumer {
	lanes := s.Fair.accumulateLaneTenants()
	var out []Consumer
	for _, idx := range slices.Sorted(maps.Keys(lanes)) {
		c := st.Consumer
		c.Name = AccumulateLane(idx)
		c.Subject = ""
		c.Subjects = nil
		b, r := c, c
		b.Name = AccumulateBatchLane(idx)
		r.Name, r.Stream = AccumulateClaimedLane(idx), StreamResponses
		for _, tok := range lanes[idx] {
			c.Subjects = append(c.Subjects, wire.InTenantPrefix+tok+".response", wire.InTenantPrefix+tok+".stream.>")
			b.Subjects = append(b.Subjects, wire.InTenantPrefix+tok+"."+wire.InTenantBatchRest)
			r.Subjects = append(r.Subjects, wire.InTenantPrefix+tok+"."+wire.InTenantClaimedRest+"*")
			if s.zeroForms() { // partition 0 of the mapped subjects (.stream.> holds its stream events'); the others' in their streams
				b.Subjects = append(b.Subjects, wire.InTenantPrefix+tok+"."+wire.InTenantBatchRest+".0")
				r.Subjects = append(r.Subjects, wire.InTenantPrefix+tok+"."+wire.InTenantClaimedRest+"*.0")
			}
		}
		c.Description = "toolgate accumulate gate, lane " + strconv.Itoa(idx) + ": " + strings.Join(lanes[idx], ", ")
		b.Description = "toolgate accumulate gate, lane " + strconv.Itoa(idx) + " batch: " + strings.Join(lanes[idx], ", ")
		r.Description = "toolgate accumulate gate, lane " + strconv.Itoa(idx) + " claimed: " + strings.Join(lanes[idx], ", ")
		c.FromNow, b.FromNow, r.FromNow = true, true, true
		out = append(out, c, b, r)
	}
	return out
}

// accumulateLaneGroups are accumulate's fairness keys: the main durables
// (TOOLGATE_IN's and TOOLGATE_RESPONSES', each keeping half of the share
// when both have work), then each lane index's interactive, claimed and
// batch durables with its lane's weight and the batch floor. Without lanes
// it is the one main group.
func (s Settings) accumulateLaneGroups(st Stage) []LaneGroup {
	lanes := s.Fair.accumulateLaneTenants()
	out := []LaneGroup{{Stream: StreamIn, Durables: []string{st.Consumer.Name, AccumulateClaimed}, Streams: []string{StreamIn, StreamResponses}, Weight: 1, Floor: 50}}
	for _, idx := range slices.Sorted(maps.Keys(lanes)) {
		out = append(out, LaneGroup{Stream: StreamIn, Durables: []string{AccumulateLane(idx), AccumulateClaimedLane(idx), AccumulateBatchLane(idx)},
			Streams: []string{StreamIn, StreamResponses, StreamIn}, Weight: s.Fair.LaneWeight(idx), Floor: s.Fair.Floor()})
	}
	return out
}

// ensureFromNow creates or updates a durable that starts at the stream's
// next message (Consumer.FromNow): a new one starts there and records, per
// filter, where it started; an existing one keeps its start and the
// starts of the filters it had, and a filter new to it starts at the
// stream's next message.
func ensureFromNow(ctx context.Context, js jetstream.JetStream, s Settings, c Consumer) error {
	cfg := s.Config(c)
	stream, err := js.Stream(ctx, c.Stream)
	if err != nil {
		return err
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return err
	}
	next := info.State.LastSeq + 1
	var old map[string]string
	if cur, err := js.Consumer(ctx, c.Stream, c.Name); err == nil {
		oc := cur.CachedInfo().Config
		cfg.DeliverPolicy, cfg.OptStartSeq = oc.DeliverPolicy, oc.OptStartSeq
		old = oc.Metadata
	} else if errors.Is(err, jetstream.ErrConsumerNotFound) {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, next
	} else {
		return err
	}
	md := maps.Clone(cfg.Metadata)
	if md == nil {
		md = map[string]string{}
	}
	for _, f := range c.Subjects {
		tok := tenantOfFilter(f)
		k := AccumulateStartKey + tok
		if v, ok := old[k]; ok {
			md[k] = v
		} else {
			md[k] = strconv.FormatUint(next, 10)
		}
	}
	cfg.Metadata = md
	if _, err := js.CreateOrUpdateConsumer(ctx, c.Stream, cfg); err != nil {
		return fmt.Errorf("streams: consumer %s: %w", c.Name, err)
	}
	return nil
}

// tenantOfFilter is the tenant token of a lane filter
// toolgate.in.t.<tok>.<rest> (.response, .stream.>, .batch, and .> as
// applied before the batch durables).
func tenantOfFilter(f string) string {
	tok, _, _ := wire.SplitInTenant(f)
	return tok
}

// AccumulateOwner tells accumulate's worker which of its inputs a lane
// owns. Built from the lane durables as the server has them.
type AccumulateOwner struct {
	lane  map[string]string // tenant token -> interactive lane durable
	batch map[string]string // tenant token -> batch lane durable
	// from and bfrom: partition k -> tenant token -> first sequence of
	// InputStream(k) the interactive or batch lane owns (in_partitions.go);
	// a partition whose lane durables were not read has no start: its
	// main durable's.
	from  map[int]map[string]uint64
	bfrom map[int]map[string]uint64
	// claimed and cfrom: the same for the claimed lanes, cfrom per claimed
	// partition k (in sequences of ResponsesStream(k)); a partition whose
	// lane durables were not read has no start: its main durable's.
	claimed map[string]string
	cfrom   map[int]map[string]uint64
}

// ReadAccumulateOwner reads the lane durables of s from the server; none
// (no lanes) is a nil owner, which owns nothing.
func ReadAccumulateOwner(ctx context.Context, js jetstream.JetStream, s Settings) (*AccumulateOwner, error) {
	st, _ := Lookup(Accumulate)
	lanes := s.accumulateLanes(st)
	if len(lanes) == 0 {
		return nil, nil
	}
	o := &AccumulateOwner{lane: map[string]string{}, from: map[int]map[string]uint64{0: {}}, batch: map[string]string{}, bfrom: map[int]map[string]uint64{0: {}},
		claimed: map[string]string{}, cfrom: map[int]map[string]uint64{0: {}}}
	ks, err := ResponsesPartitionsOf(ctx, js)
	if err != nil {
		return nil, err
	}
	iks, err := InPartitionsOf(ctx, js)
	if err != nil {
		return nil, err
	}
	for _, k := range iks { // the lanes' durables in each partition of TOOLGATE_IN that exists
		if err := o.readPartition(ctx, js, s.accumulateInPartitionConsumers(st, k), k); err != nil {
			return nil, err
		}
	}
	for _, k := range ks { // the claimed lanes' durables in each partition that exists
		for _, c := range s.accumulatePartitionConsumers(st, k) {
			if c.Name == AccumulateClaimed {
				continue
			}
			cons, err := js.Consumer(ctx, c.Stream, c.Name)
			if errors.Is(err, jetstream.ErrConsumerNotFound) {
				continue // not applied there yet: the partition's main durable handles its tenants
			}
			if err != nil {
				return nil, fmt.Errorf("streams: accumulate lane %s of %s: %w", c.Name, c.Stream, err)
			}
			md := cons.CachedInfo().Config.Metadata
			if o.cfrom[k] == nil {
				o.cfrom[k] = map[string]uint64{}
			}
			for _, f := range c.Subjects {
				tok := tenantOfFilter(f)
				if n, err := strconv.ParseUint(md[AccumulateStartKey+tok], 10, 64); err == nil {
					o.claimed[tok], o.cfrom[k][tok] = c.Name, n
				}
			}
		}
	}
	for _, c := range lanes {
		cons, err := js.Consumer(ctx, c.Stream, c.Name)
		if err != nil {
			return nil, fmt.Errorf("streams: accumulate lane %s: %w (apply the streams again)", c.Name, err)
		}
		md := cons.CachedInfo().Config.Metadata
		lane, from := o.lane, o.from[0]
		switch {
		case strings.HasSuffix(c.Name, "b"):
			lane, from = o.batch, o.bfrom[0]
		case c.Stream == StreamResponses:
			lane, from = o.claimed, o.cfrom[0]
		}
		for _, f := range c.Subjects {
			tok := tenantOfFilter(f)
			n, err := strconv.ParseUint(md[AccumulateStartKey+tok], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("streams: accumulate lane %s has no start for tenant %s: apply the streams again", c.Name, tok)
			}
			lane[tok], from[tok] = c.Name, n
		}
	}
	return o, nil
}

// readPartition reads the starts of accumulate's lane durables cs in
// TOOLGATE_IN's partition k >= 1; one not applied there yet is left out
// (the partition's main durable handles its tenants).
func (o *AccumulateOwner) readPartition(ctx context.Context, js jetstream.JetStream, cs []Consumer, k int) error {
	for _, c := range cs {
		if c.Name == Accumulate {
			continue
		}
		cons, err := js.Consumer(ctx, c.Stream, c.Name)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("streams: accumulate lane %s of %s: %w", c.Name, c.Stream, err)
		}
		md := cons.CachedInfo().Config.Metadata
		lane, from := o.lane, o.from
		if strings.HasSuffix(c.Name, "b") {
			lane, from = o.batch, o.bfrom
		}
		if from[k] == nil {
			from[k] = map[string]uint64{}
		}
		for _, f := range c.Subjects {
			tok := tenantOfFilter(f)
			if n, err := strconv.ParseUint(md[AccumulateStartKey+tok], 10, 64); err == nil {
				lane[tok], from[k][tok] = c.Name, n
			}
		}
	}
	return nil
}

// Skip reports whether durable's input on subject at stream sequence seq is
// not durable's to handle: on the main durable, what a lane owns; on a
// lane, what was stored before it owned the tenant (the main durable
// handled that). A tenant's .response and .stream.<id> input is its
// interactive lane's, its .batch input its batch lane's, each from its own
// start; anything else under the tenant's prefix is no lane's (the main
// durable refuses it). The interactive lane leaves a .batch input it still
// holds from before the batch durable existed (it then read the tenant's
// every subject) to the main durable or the batch lane.
func (o *AccumulateOwner) Skip(durable, subject string, seq uint64) bool {
	if o == nil {
		return false
	}
	k := 0
	if base, part, _, ok := SplitInPartition(subject); ok { // a stream event or batch response of TOOLGATE_IN's partition k (in_partitions.go)
		subject, k = base, part
	}
	tok, rest, ok := wire.SplitInTenant(subject)
	if !ok {
		return false // a legacy subject: the main durable's
	}
	lanes, froms := o.lane, o.from[k]
	switch {
	case rest == wire.InTenantBatchRest:
		lanes, froms = o.batch, o.bfrom[k]
	case strings.HasPrefix(rest, wire.InTenantClaimedRest): // TOOLGATE_RESPONSES' (claimed.go), or partition k's
		_, k, _, _ := SplitClaimedPartition(subject)
		lanes, froms = o.claimed, o.cfrom[k]
	case rest == "response" || strings.HasPrefix(rest, "stream."):
	default: // no ingest subject: the main durable's, to refuse
		return durable != Accumulate
	}
	lane, listed := lanes[tok]
	start, started := froms[tok]
	owned := listed && started && seq >= start
	switch {
	case durable == Accumulate || durable == AccumulateClaimed:
		return owned
	case lane == durable:
		return !owned
	case rest == wire.InTenantBatchRest && o.lane[tok] == durable:
		return true
	}
	return false
}
