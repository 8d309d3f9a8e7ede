package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/provider"
	"github.com/toolgate/toolgate/pkg/producer"
	"github.com/toolgate/toolgate/pkg/wire"
)

// planned is one response publish sends: a whole body, or a stream's events
// and the Toolgate-End reason it ends with ("" for none).
type planned struct {
	meta   producer.Meta
	body   []byte
	events [][]byte
	end    string
	// terminal: the stream's events hold the provider's terminal event, so
	// toolgate settles it at once; without it (and without end) toolgate
	// waits for more until its idle timeout.
	terminal bool
	dup      bool // JetStream already held every message of it
}

func (r *planned) stream() bool { return r.events != nil }

// planOf turns the input into the responses to publish. A recording may
// hold several responses back to back (an agent loop): each becomes its own
// response id, <rid>-r2, <rid>-r3, as a producer would send them; the last
// ends where the recording was cut, or with end.
func planOf(meta producer.Meta, data []byte, end string) ([]planned, error) {
	if !provider.IsTranscript(data) {
		return []planned{{meta: meta, body: data}}, nil
	}
	events, cut, err := transcriptEvents(data)
	if err != nil {
		return nil, err
	}
	groups := splitResponses(meta.Provider, events)
	plan := make([]planned, len(groups))
	for i, group := range groups {
		m := meta
		if i > 0 {
			m.ResponseID = fmt.Sprintf("%s-r%d", meta.ResponseID, i+1)
		}
		plan[i] = planned{meta: m, events: group, terminal: holdsTerminal(meta.Provider, group)}
		if i == len(groups)-1 {
			plan[i].end = cut
			if end != "" {
				plan[i].end = end
			}
		}
	}
	return plan, nil
}

// holdsTerminal reports whether events hold the provider's terminal event.
func holdsTerminal(prov string, events [][]byte) bool {
	acc, err := provider.NewAccumulator(prov)
	if err != nil {
		return false
	}
	for _, ev := range events {
		_ = acc.Add(ev)
	}
	return acc.Done()
}

// send publishes r and says so; a duplicate is marked, not an error.
func (r *planned) send(ctx context.Context, p *producer.Producer) error {
	rid := r.meta.ResponseID
	var err error
	if r.stream() {
		err = p.PublishStream(ctx, r.meta, r.events, r.end)
	} else {
		err = p.PublishResponse(ctx, r.meta, r.body)
	}
	switch {
	case errors.Is(err, producer.ErrDuplicate):
		r.dup = true
		fmt.Printf("duplicate: response id %s was already published with this content; nothing new was sent\n", rid)
		return nil
	case err != nil:
		return err
	case !r.stream():
		fmt.Printf("published %s: one %s response (%d bytes)\n", rid, r.meta.Provider, len(r.body))
		return nil
	}
	fmt.Printf("published %s: %d %s stream events on %s\n", rid, len(r.events), r.meta.Provider, wire.InStreamFor(r.meta.Tenant, rid))
	switch {
	case r.end != "":
		fmt.Printf("  then %s: %s (toolgate settles it now; nothing of an unfinished stream runs)\n", wire.HeaderEnd, r.end)
	case !r.terminal:
		fmt.Printf("  no terminal event: toolgate holds the stream open for more until its idle timeout (--stream-idle-timeout, default 60s) ends it transport_incomplete; --end REASON ends it now\n")
	}
	return nil
}

// duplicateIDs lists the response ids of plan JetStream already held.
func duplicateIDs(plan []planned) []string {
	var out []string
	for _, r := range plan {
		if r.dup {
			out = append(out, r.meta.ResponseID)
		}
	}
	return out
}

// alreadyPublished says where the outcomes of re-published responses are:
// they came when each first arrived, on a subject a producer reads only
// live (its user may not read the results stream back).
func alreadyPublished(rids []string) string {
	var cmds []string
	for _, rid := range rids {
		cmds = append(cmds, "`toolgate results "+rid+"`")
	}
	return fmt.Sprintf("already published: %s held this content before, so nothing new ran; its outcomes came when it first arrived: see %s", strings.Join(rids, ", "), strings.Join(cmds, ", "))
}

// transcriptEvents splits a recorded stream for publishing: its events, and
// the Toolgate-End reason of a recording cut short. A JSON array (Gemini's
// streamGenerateContent without alt=sse) whose connection was cut sends its
// complete elements, then the end marker with the reason, so toolgate
// settles the response as unfinished at once instead of at its idle timeout
// (nothing of an unfinished stream runs); never a fragment of an element.
// Any other broken transcript, or a cut one with no complete element, is an
// error and nothing is sent.
func transcriptEvents(data []byte) (events [][]byte, cut string, err error) {
	events, err = provider.SplitTranscript(data)
	if errors.Is(err, provider.ErrCutTranscript) && len(events) > 0 {
		return events, err.Error(), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("publish: %w", err)
	}
	return events, "", nil
}

// splitResponses cuts a transcript's events into responses: a new one
// starts where the provider's accumulator says the previous one ended.
func splitResponses(prov string, events [][]byte) [][][]byte {
	var groups [][][]byte
	var cur [][]byte
	acc, err := provider.NewAccumulator(prov)
	if err != nil {
		return [][][]byte{events}
	}
	for _, ev := range events {
		if err := acc.Add(ev); errors.Is(err, provider.ErrAfterTerminal) && len(cur) > 0 && !isTrailer(ev) {
			groups = append(groups, cur)
			cur = nil
			acc, _ = provider.NewAccumulator(prov)
			_ = acc.Add(ev)
		}
		cur = append(cur, ev)
	}
	return append(groups, cur)
}

// isTrailer reports the events that may follow a terminal one in the same
// response ([DONE], a usage-only chunk).
func isTrailer(ev []byte) bool {
	t := strings.TrimSpace(string(ev))
	return t == "[DONE]" || strings.Contains(t, `"choices":[]`)
}
