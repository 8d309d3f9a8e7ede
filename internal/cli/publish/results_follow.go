package publish

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// followProbe is how often a follower looks for calls it has not seen yet
// (a stream that settles into calls while it follows).
const followProbe = time.Second

// follow prints rs, then every new outcome of its response as it is
// stored, until every call has one (or the response its own), or ctx ends;
// then what is still pending. It returns the verdict of what it saw.
func (rd *reader) follow(ctx context.Context, rs responseStory, out *outcomeWriter) error {
	out.snapshot(rs)
	if complete(rs) {
		return verdict(rs)
	}
	msgs, stop, err := rd.followResults(ctx, rs)
	if err != nil {
		return err
	}
	defer stop()
	tick := time.NewTicker(followProbe)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return rd.pending(rs, out)
		case <-tick.C:
			if err := rd.addCalls(&rs); err != nil && ctx.Err() == nil {
				return err
			}
		case m, ok := <-msgs:
			if !ok {
				if ctx.Err() != nil {
					return rd.pending(rs, out)
				}
				return fmt.Errorf("results %s: reading %s stopped; run it again", rs.ResponseID, streams.StreamResults)
			}
			o, err := decodeOutcome(m.Data())
			switch {
			case err != nil:
				fmt.Fprintf(os.Stderr, "toolgate: %s: skipped: %v\n", cmdutil.Printable(m.Subject()), err)
				continue
			case o.response != nil:
				rs.Result = o.response
				out.response(*o.response)
			default:
				s := rd.ended(&rs, *o.call)
				out.call(s)
			}
			if complete(rs) {
				// A call whose record lagged behind its siblings' results
				// would end the follow early: look once more.
				if err := rd.addCalls(&rs); err != nil {
					return err
				}
				if complete(rs) {
					return verdict(rs)
				}
			}
		}
	}
}

// complete reports whether rs has every outcome it will get: the
// response's own, or one for each of its calls (as many as its results'
// response_calls say, when they say).
func complete(rs responseStory) bool {
	if rs.Result != nil {
		return true
	}
	for _, s := range rs.Calls {
		if s.Result == nil {
			return false
		}
	}
	return len(rs.Calls) > 0 && len(rs.Calls) >= expectedCalls(rs)
}

// expectedCalls is how many calls rs's response proposed, as its results
// say (response_calls); 0 when none says.
func expectedCalls(rs responseStory) int {
	n := 0
	for _, s := range rs.Calls {
		if s.Result != nil {
			n = max(n, s.Result.ResponseCalls)
		}
	}
	return n
}

// ended records res as its call's outcome in rs, adding the call if it
// was not known yet, and returns the call's story.
func (rd *reader) ended(rs *responseStory, res pipeline.Result) story {
	for i := range rs.Calls {
		if rs.Calls[i].Record.CallID == res.CallID {
			rs.Calls[i].Result, rs.Calls[i].Waiting = &res, nil
			return rs.Calls[i]
		}
	}
	recs, err := rd.callsOf(rs.ResponseID, []pipeline.Result{res})
	s := story{Record: pipeline.StatusRecord{CallID: res.CallID, ResponseID: res.ResponseID, Tool: res.Tool, Status: res.Status, Failure: res.Failure, History: res.History}, Result: &res}
	if err == nil {
		for _, r := range recs {
			if r.CallID == res.CallID {
				s.Record = r
			}
		}
	}
	rs.Calls = append(rs.Calls, s)
	_ = rd.addCalls(rs) // its siblings too; a failure here is retried at the next probe
	return s
}

// addCalls adds to rs the calls whose status records appeared since.
func (rd *reader) addCalls(rs *responseStory) error {
	recs, err := rd.callsOf(rs.ResponseID, nil)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, s := range rs.Calls {
		known[s.Record.CallID] = true
	}
	for _, r := range recs {
		if !known[r.CallID] {
			rs.Calls = append(rs.Calls, story{Record: r})
		}
	}
	return nil
}

// pending prints the calls still without an outcome when the follow
// stops, as they stand now, and returns the verdict.
func (rd *reader) pending(rs responseStory, out *outcomeWriter) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	now := &reader{ctx: ctx, js: rd.js, now: rd.now, idle: rd.idle}
	for i, s := range rs.Calls {
		if s.Result != nil {
			continue
		}
		if r, err := now.record(s.Record.CallID); err == nil && r != nil {
			s.Record = *r
		}
		if w, err := now.waiting(s.Record); err == nil {
			s.Waiting = w
		}
		rs.Calls[i] = s
		if out.json {
			out.line(s)
		} else {
			fmt.Fprintf(out.w, "%s  %s  %s (no outcome yet)\n  now       %s\n", s.Record.CallID, s.Record.Tool, s.Record.Status, cmdutil.Printable(whereNow(s, rd.now())))
		}
	}
	return verdict(rs)
}

// followResults delivers on msgs every result of rs's response stored
// after what rs read, in every results stream that exists (a response's
// are in its partition's, which a reader need not know); msgs closes once
// every stream's reading stopped. stop ends the reading.
func (rd *reader) followResults(ctx context.Context, rs responseStory) (<-chan jetstream.Msg, func(), error) {
	refs, err := resultsStreams(ctx, rd.js)
	if err != nil {
		return nil, nil, err
	}
	var its []jetstream.MessagesContext
	stop := func() {
		for _, it := range its {
			it.Stop()
		}
	}
	for _, ref := range refs {
		c, err := resultsConsumer(ctx, rd.js, ref, rs.ResponseID, rs.seqs[ref.Name])
		if err != nil {
			stop()
			return nil, nil, err
		}
		it, err := c.Messages()
		if err != nil {
			stop()
			return nil, nil, cmdutil.ExplainNATS(err, "results of "+rs.ResponseID)
		}
		its = append(its, it)
	}
	msgs := make(chan jetstream.Msg)
	var wg sync.WaitGroup
	for _, it := range its {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				m, err := it.Next()
				if err != nil {
					return // stopped
				}
				select {
				case msgs <- m:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(msgs) }()
	return msgs, stop, nil
}
