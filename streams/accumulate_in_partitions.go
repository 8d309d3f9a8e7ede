package streams

import (
	"context"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Accumulate's durables in the ingest partitions (in_partitions.go,
// claimed_partitions.go): the same names in every partition stream, read
// by its worker as one lane across them.

// IngestPartitionNames names TOOLGATE_RESPONSES' and TOOLGATE_IN's
// partition streams k >= 1 that exist: accumulate's worker reads them all
// (worker.Config.Parts), whatever its P.
func IngestPartitionNames(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	names, err := ResponsesStreamNames(ctx, js)
	if err != nil {
		return nil, err
	}
	in, err := InStreamNames(ctx, js)
	return append(names, in...), err
}

// IngestPartOf reports whether partition stream part holds accumulate's
// durables read in stream, their partition 0 stream
// (worker.Config.PartOf): the claimed durables are in TOOLGATE_RESPONSES',
// the others in TOOLGATE_IN's.
func IngestPartOf(stream, part string) bool {
	return stream == StreamResponses && IsResponsesPartitionStream(part) || stream == StreamIn && IsInPartitionStream(part)
}

// accumulateInPartitionConsumers are accumulate's durables in TOOLGATE_IN's
// partition k >= 1: its main durable and its interactive and batch lane
// durables, under the same names as in TOOLGATE_IN, on that partition's
// subjects (a lane's: its tenants' stream events, or batch responses).
func (s Settings) accumulateInPartitionConsumers(st Stage, k int) []Consumer {
	suffix := "." + strconv.Itoa(k)
	c := st.Consumer
	c.Stream, c.Subject, c.Subjects = InputStream(k), "", InPartitionSubjects(k)
	c.Description += ", partition " + strconv.Itoa(k)
	out := []Consumer{c}
	lanes := s.Fair.accumulateLaneTenants()
	for _, l := range s.accumulateLanes(st) {
		if accumulateClaimed(l.Name) {
			continue
		}
		batch := strings.HasSuffix(l.Name, "b")
		l.Stream, l.Subject, l.Subjects = InputStream(k), "", nil
		for _, tok := range lanes[laneIndexOf(l.Name)] {
			if batch {
				l.Subjects = append(l.Subjects, wire.InTenantPrefix+tok+"."+wire.InTenantBatchRest+suffix)
			} else {
				l.Subjects = append(l.Subjects, wire.InTenantPrefix+tok+".stream.*"+suffix)
			}
		}
		l.Description += ", partition " + strconv.Itoa(k)
		out = append(out, l)
	}
	return out
}
