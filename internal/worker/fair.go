package worker

import (
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// Share is one fairness key's claim on a worker (a tenant's lane): its
// durables in priority order and its weight. Each round of the worker's
// weighted round robin gives a share that has work Weight x Quantum inputs;
// within it the first durable goes first, and each later durable that has
// work keeps Floor percent of the share (at least one input), so it is
// never starved. What a share does not use goes to the shares that have
// work: one share alone gets the whole worker.
type Share struct {
	// Stream holds Durables; "": the worker's Stream.
	Stream   string
	Durables []string
	// Streams, when set, is the stream of each of Durables, in order
	// (accumulate's durables of TOOLGATE_IN and TOOLGATE_RESPONSES); ""
	// or unset: Stream.
	Streams []string
	Weight  int // <= 0: 1
	Floor   int // percent of the share kept for each later durable with work
}

// FairWindow is the Window of a worker that reads fairness lanes: what a
// stage has published and not yet seen stored waits in the next stream's
// ingest in front of every tenant's hops, so the burst of one lane must
// not fill it (measured with toolgate bench --neighbour 10000: the quiet
// tenant's p99 during the burst 2.97 s with 400, 0.52 s with 16, the burst
// draining no slower).
const FairWindow = 16

// laneBuffer is how many pulled inputs wait per durable for the round
// robin (besides what its iterator buffers): enough that a lone busy lane
// keeps the handlers fed.
const laneBuffer = 16

// source is one durable of one stream the worker reads; none: a partition
// that does not hold it (Config.PartOf), never read.
type source struct {
	stream, durable string
	none            bool
}

// shares are the worker's Shares, or its one durable as a share of its own
// when it has none.
func (w *Worker) shares() []Share {
	if len(w.cfg.Shares) == 0 {
		return []Share{{Stream: w.cfg.Stream, Durables: []string{w.cfg.Durable}, Weight: 1}}
	}
	return w.cfg.Shares
}

// sources lists every durable the worker reads with the partition streams
// parts (each holding every durable of the shares under the same name),
// in share order, then durable order, then partition 0 before parts.
func (w *Worker) sources(parts []string) []source {
	var out []source
	for _, s := range w.shares() {
		stream := s.Stream
		if stream == "" {
			stream = w.cfg.Stream
		}
		for k, d := range s.Durables {
			st := stream
			if k < len(s.Streams) && s.Streams[k] != "" {
				st = s.Streams[k]
			}
			out = append(out, source{stream: st, durable: d})
			for _, p := range parts {
				out = append(out, source{stream: p, durable: d, none: w.cfg.PartOf != nil && !w.cfg.PartOf(st, p)})
			}
		}
	}
	return out
}

// fair pulls from every iterator at once and hands the inputs to deliver in
// weighted round robin over the shares (roundRobin), until every iterator
// is closed and what they delivered is handed out. The server orders each
// durable; this orders the durables. iters are sources(parts)' iterators,
// nil where a partition's durable was not found.
func (w *Worker) fair(srcs []source, iters []jetstream.MessagesContext, nparts int, deliver func(jetstream.Msg)) {
	rr := newPartRoundRobin(w.shares(), w.cfg.Quantum, nparts)
	var pulls sync.WaitGroup
	for i, it := range iters {
		if it == nil {
			continue
		}
		pulls.Add(1)
		go func() {
			defer pulls.Done()
			w.pull(it, w.skipping(srcs[i].durable, rr.push(i)))
		}()
	}
	done := make(chan struct{})
	go func() { pulls.Wait(); close(done) }()
	rr.run(deliver, done)
}

// roundRobin is the weighted round robin over durables' inputs. With
// partitions each durable of a share is read in every partition stream,
// and its partitions' inputs count as the durable's: a lane's share is the
// same whatever the number of partitions its tenants' calls are spread
// over (within a durable, its partitions take turns one input at a time).
type roundRobin struct {
	shares  []Share
	quantum int
	nparts  int                  // streams each durable is read in: 1 + partitions
	queues  []chan jetstream.Msg // per durable and partition, in share, durable, partition order
	first   []int                // index of each share's first durable's first queue
	turns   []turn               // per share: what is left of its budget this round
	next    []int                // per durable: the partition it takes from next
	wake    chan struct{}
}

// turn is what a share may still take in the current round: left in all,
// of which the first durable at most first (the rest is its later
// durables' floor).
type turn struct{ first, left int }

func newRoundRobin(shares []Share, quantum int) *roundRobin {
	return newPartRoundRobin(shares, quantum, 1)
}

// newPartRoundRobin is a round robin over shares whose durables are each
// read in nparts streams.
func newPartRoundRobin(shares []Share, quantum, nparts int) *roundRobin {
	nparts = max(nparts, 1)
	rr := &roundRobin{shares: shares, quantum: max(quantum, 1), nparts: nparts, wake: make(chan struct{}, 1), turns: make([]turn, len(shares))}
	for _, s := range shares {
		rr.first = append(rr.first, len(rr.queues))
		for range s.Durables {
			rr.next = append(rr.next, 0)
			for range nparts {
				rr.queues = append(rr.queues, make(chan jetstream.Msg, laneBuffer))
			}
		}
	}
	return rr
}

// push is the deliver function of source i's puller: it queues the input
// and wakes the round robin.
func (rr *roundRobin) push(i int) func(jetstream.Msg) {
	q := rr.queues[i]
	return func(m jetstream.Msg) {
		q <- m
		select {
		case rr.wake <- struct{}{}:
		default:
		}
	}
}

// run hands inputs out round by round; when a round finds none it waits for
// a push, and once done is closed it hands out what is left and returns.
func (rr *roundRobin) run(deliver func(jetstream.Msg), done <-chan struct{}) {
	for {
		if rr.round(deliver) > 0 {
			continue
		}
		select {
		case <-rr.wake:
		case <-done:
			for rr.round(deliver) > 0 {
			}
			return
		}
	}
}

// durable is durable k of share si: its partitions' queues and its cursor.
func (rr *roundRobin) durable(si, k int) ([]chan jetstream.Msg, *int) {
	at := rr.first[si] + k*rr.nparts
	return rr.queues[at : at+rr.nparts], &rr.next[rr.first[si]/rr.nparts+k]
}

// waiting reports whether any partition of a durable has an input.
func waiting(qs []chan jetstream.Msg) bool {
	for _, q := range qs {
		if len(q) > 0 {
			return true
		}
	}
	return false
}

// take takes a durable's next input, its partitions in turn.
func take(qs []chan jetstream.Msg, next *int) (jetstream.Msg, bool) {
	for range qs {
		q := qs[*next%len(qs)]
		*next = (*next + 1) % len(qs)
		select {
		case m := <-q:
			return m, true
		default:
		}
	}
	return nil, false
}

// round gives each share with work its budget and returns how many inputs
// it handed out. The shares take turns one input at a time (each pass
// gives every share with budget and work one), so an input of a quiet
// share waits for at most one input of each other share, not for their
// whole budgets: deliver blocks while the handlers are busy, and a share
// handed its budget in one go made a quiet input arriving meanwhile wait
// for Weight x Quantum noisy ones in every stage it passes.
func (rr *roundRobin) round(deliver func(jetstream.Msg)) int {
	for si, s := range rr.shares {
		budget := max(s.Weight, 1) * rr.quantum
		// Each later durable with work keeps its floor; the first takes
		// the rest, the later ones in order what the first leaves.
		floor := max(budget*s.Floor/100, 1)
		reserved := 0
		for k := 1; k < len(s.Durables); k++ {
			if qs, _ := rr.durable(si, k); waiting(qs) {
				reserved += floor
			}
		}
		rr.turns[si] = turn{first: max(budget-reserved, 0), left: budget}
	}
	n := 0
	for {
		k := 0
		for si := range rr.shares {
			t := &rr.turns[si]
			if t.left == 0 {
				continue
			}
			if m, ok := rr.pick(si, t); ok {
				deliver(m)
				k++
			}
		}
		if k == 0 {
			return n
		}
		n += k
	}
}

// pick takes share si's next input: its first durable's while its part
// lasts, else the first later one's with work.
func (rr *roundRobin) pick(si int, t *turn) (jetstream.Msg, bool) {
	if t.first > 0 {
		if m, ok := take(rr.durable(si, 0)); ok {
			t.first--
			t.left--
			return m, true
		}
	}
	for k := 1; k < len(rr.shares[si].Durables); k++ {
		if m, ok := take(rr.durable(si, k)); ok {
			t.left--
			return m, true
		}
	}
	return nil, false
}

// skipping is deliver for durable, leaving out what cfg.Skip says is not
// its own: acked at once, as a handler that had nothing to do would.
func (w *Worker) skipping(durable string, deliver func(jetstream.Msg)) func(jetstream.Msg) {
	if w.cfg.Skip == nil {
		return deliver
	}
	return func(m jetstream.Msg) {
		if md, err := m.Metadata(); err == nil && w.cfg.Skip(durable, m.Subject(), md.Sequence.Stream) {
			_ = m.Ack()
			return
		}
		deliver(m)
	}
}
