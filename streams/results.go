package streams

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Partitions of TOOLGATE_RESULTS (issue 37, docs/design/layout.md
// "Partitions"). A call's result goes to the partition of its gate hops,
// Partition(tenant, response id, P), so a response's results are all in
// one stream:
//
//   - partition 0 is the layout of before, byte for byte: TOOLGATE_RESULTS,
//     toolgate.results.<tenant>.<response-id> (four tokens; the stream's
//     subjects are toolgate.results.*.*, narrowed in place from
//     toolgate.results.>, its messages kept);
//   - partition k >= 1 is TOOLGATE_RESULTS_<k> (ResultsStream), like
//     partition 0 in all but its name and subjects,
//     toolgate.results.*.*.p<k>: the result of a call of partition k is on
//     toolgate.results.<tenant>.<response-id>.p<k> (wire.ResultsPartition).
//
// Tenant tokens (wire.TenantToken) and response ids (call.ValidResponseID)
// are single tokens, so the streams never overlap. A producer's
// subscription to toolgate.results.<tenant>.> receives every partition's.
// Readers read every results stream that exists (ResultsStreams), whatever
// their own P.

// ResultsStream is partition p's results stream: StreamResults for p = 0.
func ResultsStream(p int) string {
	if p <= 0 {
		return StreamResults
	}
	return StreamResults + "_" + strconv.Itoa(p)
}

// resultsStreamIndex is p of a stream name ResultsStream(p), p >= 1; false
// for any other name.
func resultsStreamIndex(name string) (int, bool) { return suffixPartition(StreamResults, name) }

// ResultsSubjects are partition p's results stream's subjects.
func ResultsSubjects(p int) []string {
	if p <= 0 {
		return []string{subjectResults + "*.*"}
	}
	return []string{subjectResults + "*.*.p" + strconv.Itoa(p)}
}

// ResultsIn is where a result of a call of tenant in response responseID
// goes with p partitions: the partition its gate hops take.
func ResultsIn(tenant, responseID string, p int) string {
	return wire.ResultsPartition(tenant, responseID, Partition(tenant, responseID, p))
}

// ResultsOfIn matches the results of one response, whatever its tenant, in
// partition p's stream (a consumer's filter must match its stream's
// subjects).
func ResultsOfIn(p int, responseID string) string { return ResultsFilterIn(p, ResultsOf(responseID)) }

// ResultsFilterIn is filter, a results subject or filter of partition 0's
// form (toolgate.results.<tenant>.<response-id>, wildcards allowed), in
// partition p's stream: with the partition token after it for p >= 1. A
// filter ending in ">" (ResultsAll, wire.TenantResults) matches every
// partition's as it is.
func ResultsFilterIn(p int, filter string) string {
	if p <= 0 || strings.HasSuffix(filter, ">") {
		return filter
	}
	return filter + ".p" + strconv.Itoa(p)
}

// ResultsStreamRef is a results stream that exists: its partition and name.
type ResultsStreamRef struct {
	P    int
	Name string
}

// ResultsStreams lists the results streams that exist, partition 0 first,
// then p >= 1 in order of p: what readers read, whatever their own P (a
// lowered P's streams keep their results until max age).
func ResultsStreams(ctx context.Context, js jetstream.JetStream) ([]ResultsStreamRef, error) {
	zero, ps, err := listPartitions(ctx, js, ResultsAll(), StreamResults, resultsStreamIndex)
	if err != nil {
		return nil, fmt.Errorf("streams: results streams: %w", err)
	}
	var out []ResultsStreamRef
	if zero {
		out = append(out, ResultsStreamRef{Name: StreamResults})
	}
	for _, p := range ps {
		out = append(out, ResultsStreamRef{P: p, Name: ResultsStream(p)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("streams: stream %s: %w", StreamResults, jetstream.ErrStreamNotFound)
	}
	return out, nil
}

// resultsPartitionConfigs are the results streams of partitions 1 to P-1,
// each like zero (partition 0's) on its own subjects.
func (s Settings) resultsPartitionConfigs(zero jetstream.StreamConfig) []jetstream.StreamConfig {
	var out []jetstream.StreamConfig
	for p := 1; p < s.Fair.PartitionCount(); p++ {
		c := zero
		c.Name, c.Subjects = ResultsStream(p), ResultsSubjects(p)
		out = append(out, c)
	}
	return out
}

// pruneResults deletes the results streams beyond s's P that hold
// nothing; one that holds results is kept (readers read it; it empties as
// its results pass max age). Results are never acknowledged away.
func pruneResults(ctx context.Context, js jetstream.JetStream, s Settings) (deleted, kept []string, err error) {
	refs, err := ResultsStreams(ctx, js)
	if err != nil {
		return nil, nil, err
	}
	ps := make([]int, 0, len(refs))
	for _, r := range refs {
		ps = append(ps, r.P)
	}
	return pruneBeyond(ctx, js, ps, s.Fair.PartitionCount(), ResultsStream)
}

// resultsPartitionStreams names the results streams among infos, in order
// of partition (partition 0's first).
func resultsPartitionStreams(infos map[string]*jetstream.StreamInfo) []string {
	return partitionNamesIn(infos, StreamResults, resultsStreamIndex, ResultsStream)
}
