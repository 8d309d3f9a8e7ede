package bench

import "strconv"

// Layout is how the ceiling stores its hops.
type Layout int

const (
	// OneStream keeps every hop in one work-queue stream, as the pipeline
	// keeps every gate hop in TOOLGATE_GATES: the layout's own limit.
	OneStream Layout = iota
	// StreamPerHop gives each hop a stream of its own: the most the
	// machine's JetStream carries with this worker.
	StreamPerHop
)

// partitionedBase starts the partitioned layouts (Partitioned).
const partitionedBase = 100

// Partitioned is StreamPerHop in p partitions: each hop's stream is p
// streams, a message stays in the partition it was published to (hashed
// from its id), and each hop's worker reads all p, as a partitioned stage's
// worker reads its partitions (streams.Partition).
func Partitioned(p int) Layout { return Layout(partitionedBase + max(p, 1)) }

// parts is the number of partitions of l: 1 unless Partitioned.
func (l Layout) parts() int {
	if l >= partitionedBase {
		return int(l - partitionedBase)
	}
	return 1
}

// Layouts lists the layouts the bench measures, today's first; with parts
// > 1 also Partitioned(parts).
func Layouts(parts ...int) []Layout {
	out := []Layout{OneStream, StreamPerHop}
	for _, p := range parts {
		if p > 1 {
			out = append(out, Partitioned(p))
		}
	}
	return out
}

func (l Layout) String() string {
	if p := l.parts(); p > 1 {
		return "one stream per hop in each of " + strconv.Itoa(p) + " partitions"
	}
	if l == StreamPerHop {
		return "one stream per hop"
	}
	return "one stream for all hops"
}

type benchStream struct {
	name     string
	subjects []string
}

const ceilingStream = "TOOLGATE_BENCH_CEILING"

// streams are the streams layout l creates.
func (l Layout) streams() []benchStream {
	if p := l.parts(); p > 1 {
		var out []benchStream
		for i := range Hops {
			for k := range p {
				out = append(out, benchStream{l.partStream(i, k), []string{partSubject(i, k)}})
			}
		}
		return out
	}
	if l != StreamPerHop {
		return []benchStream{{ceilingStream, []string{"toolgate.bench.hop.>"}}}
	}
	out := make([]benchStream, Hops)
	for i := range out {
		out[i] = benchStream{l.stream(i), []string{hopSubject(i)}}
	}
	return out
}

// partStream is the stream of partition k of hop i.
func (l Layout) partStream(i, k int) string {
	return ceilingStream + "_" + strconv.Itoa(i) + "_P" + strconv.Itoa(k)
}

// partSubject is the subject of partition k of hop i.
func partSubject(i, k int) string { return hopSubject(i) + ".p" + strconv.Itoa(k) }

// stream is the stream that stores hop i (partition 0's, partitioned).
func (l Layout) stream(i int) string {
	if l.parts() > 1 {
		return l.partStream(i, 0)
	}
	if l != StreamPerHop {
		return ceilingStream
	}
	return ceilingStream + "_" + strconv.Itoa(i)
}
