package dlq

import (
	"time"

	"github.com/toolgate/toolgate/streams"
)

// Filter selects dead letters; a zero field matches everything.
type Filter struct {
	Stage   string
	Failure string
	Tool    string
	CallID  string
	Since   time.Time // stored at or after
	Until   time.Time // stored at or before
}

// Subject is the stream subject filter for f's stage and failure.
func (f Filter) Subject() string {
	st, fl := f.Stage, f.Failure
	if st == "" {
		st = "*"
	}
	if fl == "" {
		fl = "*"
	}
	return streams.DLQ(st, fl)
}

// Match reports whether l passes every field of f.
func (f Filter) Match(l Letter) bool {
	switch {
	case f.Stage != "" && l.Stage != f.Stage,
		f.Failure != "" && l.Failure != f.Failure,
		f.Tool != "" && l.Tool != f.Tool,
		f.CallID != "" && l.CallID != f.CallID,
		!f.Since.IsZero() && l.Time.Before(f.Since),
		!f.Until.IsZero() && l.Time.After(f.Until):
		return false
	}
	return true
}
