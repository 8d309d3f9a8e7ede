package chaos

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/dlq"
	"github.com/toolgate/toolgate/internal/records"
	"github.com/toolgate/toolgate/streams"
)

// InputOutcome is what one hostile input ended as.
type InputOutcome struct {
	Name, What, Note string
	PublishedAt      time.Duration // since the soak began
	Outcome          string        // the recorded outcome of each of its calls or responses
	Letters          int           // dead letters of its responses
	Recorded         bool          // every call or response it made has a recorded outcome
	Defects          []string      // what issue 13 says must not happen, seen
}

// judge reads, for every published input, its results, dead letters and
// status records, and what the tools received.
func (a *attacker) judge(ctx context.Context, js jetstream.JetStream, rs *resultSet, letters []dlq.Letter, load *validLoad, tools *hostileTools, metrics string) []InputOutcome {
	calls := records.Reader{JS: js} // a call with no result: what its record, or its hop, says
	lettersOf, lettersByKey := map[string]int{}, map[string]int{}
	bare := map[string][]string{} // rid -> seqs of letters that hold neither the input nor its headers
	for _, l := range letters {
		rid := l.ResponseID
		if after, ok := strings.CutPrefix(l.OrigSubject, streams.InStreamPrefix); rid == "" && ok {
			rid = after // a letter of a stream, named only by its subject
			if len(l.Data) == 0 {
				bare[rid] = append(bare[rid], strconv.FormatUint(l.Seq, 10))
			}
		}
		lettersOf[rid]++
		key := l.CallID
		if key == "" {
			key = "response:" + rid
		}
		lettersByKey[key]++
	}
	var out []InputOutcome
	for _, s := range a.sent {
		o := InputOutcome{Name: s.in.Name, What: s.in.What, Note: s.note, PublishedAt: s.at, Recorded: true}
		if s.err != nil {
			o.Recorded = false
			o.Defects = append(o.Defects, "publish failed: "+s.err.Error())
		}
		if s.in.Name == "kv-approval" {
			o.Outcome, o.Recorded = a.survived(s), a.crashesAfter(s) == 0
			for _, l := range guardMetrics(metrics) {
				if strings.Contains(l, "malformed") && strings.Contains(l, "approval") {
					o.Outcome += "; counted: " + l
				}
			}
			out = append(out, o)
			continue
		}
		var parts, bareSeqs []string
		for _, e := range s.expects {
			if e.refused != "" {
				parts = append(parts, "refused at publish ("+e.refused+")")
				continue
			}
			got := rs.byRID(e.rid)
			o.Letters += lettersOf[e.rid]
			bareSeqs = append(bareSeqs, bare[e.rid]...)
			o.Defects = append(o.Defects, duplicates(got, load)...)
			for _, r := range got {
				if x, ok := tools.received(r.CallID); ok && x.Changed {
					o.Defects = append(o.Defects, fmt.Sprintf("%s executed with arguments the model never wrote (U+FFFD or invalid UTF-8)", r.CallID))
				}
				if !call.Status(r.Status).OK() && lettersByKey[r.key()] == 0 {
					o.Defects = append(o.Defects, fmt.Sprintf("%s ended %s with no dead letter (its evidence is lost)", r.key(), r.outcome()))
				}
				if r.Tool == "delete_customer_account" {
					o.Defects = append(o.Defects, fmt.Sprintf("%s judged as delete_customer_account", r.CallID))
				}
			}
			if e.calls == nil {
				if len(got) == 0 && lettersOf[e.rid] == 0 {
					o.Recorded = false
					parts = append(parts, "no result, no dead letter"+statusNote(ctx, calls, e.rid+"-0"))
					continue
				}
				parts = append(parts, outcomes(got))
				continue
			}
			for _, i := range e.calls {
				id := e.rid + "-" + strconv.Itoa(i)
				var mine []storedResult
				for _, r := range got {
					if r.CallID == id {
						mine = append(mine, r)
					}
				}
				if len(mine) == 0 {
					o.Recorded = false
					o.Defects = append(o.Defects, fmt.Sprintf("call %d has no result%s", i, statusNote(ctx, calls, id)))
					parts = append(parts, fmt.Sprintf("call %d: none", i))
					continue
				}
				parts = append(parts, fmt.Sprintf("call %d: %s", i, outcomes(mine)))
			}
		}
		if len(bareSeqs) > 0 {
			o.Defects = append(o.Defects, fmt.Sprintf("%d dead letters (seq %s) hold 0 bytes of input and no producer headers: no size, sha256 or note of what was cut", len(bareSeqs), strings.Join(bareSeqs, ",")))
		}
		o.Defects = uniq(o.Defects)
		o.Outcome = strings.Join(parts, "; ")
		if len(s.expects) > 1 {
			o.Outcome = fmt.Sprintf("%d responses: %s", len(s.expects), summarize(parts))
		}
		out = append(out, o)
	}
	return out
}

// duplicates are result keys stored more than once or delivered more than
// once to a core subscriber.
func duplicates(got []storedResult, load *validLoad) []string {
	n := map[string]int{}
	for _, r := range got {
		n[r.key()]++
	}
	var out []string
	for k, c := range n {
		if c > 1 {
			out = append(out, fmt.Sprintf("%s: %d results stored", k, c))
		}
		if d := load.coreDeliveries(k); d > 1 {
			out = append(out, fmt.Sprintf("%s: delivered %d times to a core subscriber", k, d))
		}
	}
	sort.Strings(out)
	return out
}

// outcomes lists the distinct outcomes of rs, with the result's size when
// it is large.
func outcomes(rs []storedResult) string {
	var parts []string
	seen := map[string]bool{}
	for _, r := range rs {
		s := r.outcome()
		if r.CallID == "" {
			s = "response " + s
		}
		if !call.Status(r.Status).OK() && len(r.Errors) > 0 {
			s += " (" + cut(strings.Join(strings.Fields(r.Errors[0]), " "), 120) + ")"
		}
		if r.NotJSON {
			s += " (not JSON)"
		}
		if r.Size > 256<<10 {
			s += fmt.Sprintf(" (result message %s)", mib(int64(r.Size)))
		}
		if !seen[s] {
			seen[s] = true
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}

// summarize counts identical parts: "10× transport_incomplete".
func summarize(parts []string) string {
	n := map[string]int{}
	var order []string
	for _, p := range parts {
		if n[p] == 0 {
			order = append(order, p)
		}
		n[p]++
	}
	var out []string
	for _, p := range order {
		out = append(out, fmt.Sprintf("%d× %s", n[p], p))
	}
	return strings.Join(out, "; ")
}

// statusNote says what the call's status record holds, if any.
func statusNote(ctx context.Context, rd records.Reader, callID string) string {
	r, err := rd.Find(ctx, callID)
	switch {
	case errors.Is(err, records.ErrMalformedStatus):
		return " (status record not readable)"
	case err != nil || r == nil:
		return ""
	}
	return " (status record: " + string(r.Status) + ")"
}

func (a *attacker) crashesAfter(s sentInput) int {
	crashes, _, _ := a.ch.figures()
	n := 0
	for _, c := range crashes {
		if c.At >= s.at && (c.After == s.in.Name || strings.Contains(c.Cause, "internal/approval")) {
			n++
		}
	}
	return n
}

func (a *attacker) survived(s sentInput) string {
	if n := a.crashesAfter(s); n > 0 {
		return fmt.Sprintf("%d crashes after the put (in internal/approval, or before the next input)", n)
	}
	return "no crash after the put (the approval sweeper runs every 5s); record skipped"
}

// uniq drops repeated lines, keeping the first of each.
func uniq(lines []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lines {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}
