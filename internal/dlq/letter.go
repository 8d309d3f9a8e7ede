// Package dlq reads, filters, replays and purges toolgate's dead letters
// (stream TOOLGATE_DLQ, subjects toolgate.dlq.<stage>.<failure>). A dead
// letter holds either a whole call envelope (raw arguments, errors, history,
// repairs) or, for input that never became a call, the input exactly as it
// arrived with its headers. The operator CLI (`toolgate dlq`) is a thin layer
// over this package.
package dlq

import (
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/streams"
)

// Letter is one dead letter as stored.
type Letter struct {
	Seq        uint64
	Time       time.Time
	Subject    string
	Stage      string // the stage that dead-lettered it (subject token)
	Failure    string // the failure class (subject token)
	CallID     string // empty for input that never became a call
	ResponseID string
	Tool       string
	Errors     []string
	// Envelope is the call, or nil for input that never became a call; then
	// Data is that input and OrigSubject where it was published.
	Envelope    *call.Envelope
	OrigSubject string
	Header      nats.Header
	Data        []byte
	// Malformed says why the letter is not one toolgate writes (check.go);
	// empty for a well-formed letter. A malformed letter is listed, shown
	// and never replayed.
	Malformed string
}

// Input reports whether l holds raw input rather than a call envelope.
func (l Letter) Input() bool { return l.Envelope == nil }

// FirstError is the first error recorded, on one line.
func (l Letter) FirstError() string {
	if len(l.Errors) == 0 {
		return ""
	}
	return strings.Join(strings.Fields(l.Errors[0]), " ")
}

// Decode reads one stored dead letter. It never fails: a body that is not an
// envelope is kept as raw input with whatever its headers say, and a letter
// toolgate would not have written says why in Malformed.
func Decode(subject string, seq uint64, at time.Time, h nats.Header, data []byte) Letter {
	l := decode(subject, seq, at, h, data)
	l.Malformed = l.check()
	return l
}

func decode(subject string, seq uint64, at time.Time, h nats.Header, data []byte) Letter {
	if h == nil {
		h = nats.Header{}
	}
	l := Letter{Seq: seq, Time: at, Subject: subject, Header: h, Data: data}
	// toolgate.dlq.<stage>.<failure> (streams.DLQ)
	if tok := strings.SplitN(subject, ".", 4); len(tok) == 4 {
		l.Stage, l.Failure = tok[2], tok[3]
	}
	l.CallID = h.Get(streams.HeaderCallID)
	l.ResponseID = h.Get(streams.HeaderResponseID)
	l.Tool = h.Get(streams.HeaderTool)
	if h.Get(streams.HeaderOrigSubject) == "" {
		if e, err := call.Unmarshal(data); err == nil {
			l.Envelope = &e
			l.CallID, l.ResponseID, l.Tool, l.Errors = e.CallID, e.ResponseID, e.ToolName, e.Errors
			return l
		}
	}
	l.OrigSubject = h.Get(streams.HeaderOrigSubject)
	if er := h.Get(streams.HeaderError); er != "" {
		l.Errors = []string{er}
	}
	return l
}
