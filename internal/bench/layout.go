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

// Layouts lists the layouts the bench measures, today's first.
func Layouts() []Layout { return []Layout{OneStream, StreamPerHop} }

func (l Layout) String() string {
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
	if l != StreamPerHop {
		return []benchStream{{ceilingStream, []string{"toolgate.bench.hop.>"}}}
	}
	out := make([]benchStream, Hops)
	for i := range out {
		out[i] = benchStream{l.stream(i), []string{hopSubject(i)}}
	}
	return out
}

// stream is the stream that stores hop i.
func (l Layout) stream(i int) string {
	if l != StreamPerHop {
		return ceilingStream
	}
	return ceilingStream + "_" + strconv.Itoa(i)
}
