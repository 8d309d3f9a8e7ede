package publish

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/streams"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// streamState is what TOOLGATE_IN and the responses bucket say of a
// streamed response: how many events are stored, the last one's time, and
// whether the accumulate stage has settled it (and as what).
type streamState struct {
	Events    uint64      `json:"events"`
	LastEvent time.Time   `json:"last_event,omitzero"`
	Settled   bool        `json:"settled"`
	SettledAs call.Status `json:"settled_as,omitempty"`
	SettledAt time.Time   `json:"settled_at,omitzero"`
	// EndsBy is when an open stream ends transport_incomplete unless it
	// completes: the last event plus the idle timeout.
	EndsBy time.Time `json:"ends_by,omitzero"`
}

// eventsIn adds to s the events st stores on subj (a filter) and the last
// one's time.
func (rd *reader) eventsIn(st jetstream.Stream, subj string, s *streamState) error {
	name := st.CachedInfo().Config.Name
	info, err := st.Info(rd.ctx, jetstream.WithSubjectFilter(subj))
	if err != nil {
		return cmdutil.ExplainNATS(err, "stream "+name)
	}
	var n uint64
	for _, c := range info.State.Subjects {
		n += c
	}
	if n == 0 {
		return nil
	}
	s.Events += n
	m, err := st.GetLastMsgForSubject(rd.ctx, subj)
	if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return cmdutil.ExplainNATS(err, "stream events in "+name)
	}
	if m != nil && m.Time.After(s.LastEvent) {
		s.LastEvent = m.Time
	}
	return nil
}

// streamOf reads responseID's stream state; nil when the response was
// never streamed (or its events aged out) and was never settled.
func (rd *reader) streamOf(responseID string) (*streamState, error) {
	// TOOLGATE_IN and its partitions (streams/in_partitions.go): with
	// P > 1 the events are stored with ".<k>", and in the claim period
	// after P changed in two places.
	names, err := streams.AllInStreams(rd.ctx, rd.js)
	if err != nil {
		return nil, cmdutil.ExplainNATS(err, "stream "+streams.StreamIn)
	}
	s := &streamState{}
	for _, name := range names {
		st, err := rd.js.Stream(rd.ctx, name)
		if err != nil {
			return nil, cmdutil.ExplainNATS(err, "stream "+name)
		}
		for _, subj := range []string{streams.InStream(responseID), streams.InStream(responseID) + ".*"} {
			if err := rd.eventsIn(st, subj, s); err != nil {
				return nil, err
			}
		}
	}
	kv, err := rd.js.KeyValue(rd.ctx, streams.BucketResponses)
	if err != nil {
		return nil, cmdutil.ExplainNATS(err, "bucket "+streams.BucketResponses)
	}
	e, err := kv.Get(rd.ctx, responseID)
	switch {
	case err == nil:
		var done struct {
			Status call.Status `json:"status"`
			At     time.Time   `json:"at"`
		}
		_ = json.Unmarshal(e.Value(), &done) // a mark that does not decode still marks the stream settled
		s.Settled, s.SettledAs, s.SettledAt = true, done.Status, done.At
	case !errors.Is(err, jetstream.ErrKeyNotFound):
		return nil, cmdutil.ExplainNATS(err, "stream mark of "+responseID)
	case s.Events == 0:
		return nil, nil
	default:
		s.EndsBy = s.LastEvent.Add(rd.idle)
	}
	return s, nil
}

// describe is the stream state in one line, relative to now.
func (s streamState) describe(now time.Time, idle time.Duration) string {
	if s.Settled {
		line := "stream settled"
		if s.SettledAs != "" {
			line += " as " + string(s.SettledAs)
		}
		if !s.SettledAt.IsZero() {
			line += " at " + clock(s.SettledAt)
		}
		return fmt.Sprintf("%s (%d events)", line, s.Events)
	}
	line := fmt.Sprintf("stream open: %d events, last %s ago; ", s.Events, ago(now, s.LastEvent))
	if now.Before(s.EndsBy) {
		return line + fmt.Sprintf("ends transport_incomplete at %s (in %s) unless it completes (idle timeout %v, TOOLGATE_STREAM_IDLE_TIMEOUT)", clock(s.EndsBy), ago(s.EndsBy, now), idle)
	}
	return line + fmt.Sprintf("past its idle timeout (%v) since %s: the accumulate stage ends it transport_incomplete at its next timer (is it running?)", idle, clock(s.EndsBy))
}
