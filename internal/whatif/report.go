package whatif

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/internal/call"
)

// Examples is how many call ids a line of the report names.
const Examples = 3

// Reasons a recorded call is not re-evaluated; the report counts each.
const (
	SkipAgedOut    = "aged out: its input is no longer in TOOLGATE_IN"
	SkipStreamed   = "a streamed response (its events are not re-assembled)"
	SkipToken      = "identity from a token (its roles are not recorded)"
	SkipNoRecord   = "no status record (in flight, or its record expired)"
	SkipBadRecord  = "unreadable status record"
	SkipOtherEnded = "ended outside the gates (batch aborted, a conflict, ...)"
	SkipInFlight   = "still on its way (its record is not final)"
	SkipRecovered  = "recovered from the assistant's text, not found in the input as such (a --tolerant-providers provider)"
)

// Change is one line of a tool's table: calls that went one way and would
// now go another.
type Change struct {
	Was   string `json:"was"`
	Would string `json:"would"`
	// Why is the reason the gates gave the first of them (redacted).
	Why      string   `json:"why,omitempty"`
	Count    int      `json:"count"`
	Examples []string `json:"examples"`
	// Refused: the call passed every gate and would now be stopped.
	Refused bool `json:"refused,omitempty"`
}

// ToolReport is one tool's table.
type ToolReport struct {
	Tool      string         `json:"tool"`
	Seen      int            `json:"seen"`
	Unchanged int            `json:"unchanged"`
	Changes   []*Change      `json:"changes"`
	Skipped   map[string]int `json:"not_re_evaluated,omitempty"`
}

// Report is the what-if: a table per tool, and what could not be
// re-evaluated, counted by reason (never silently left out).
type Report struct {
	Tools   map[string]*ToolReport `json:"-"`
	Skipped map[string]int         `json:"not_re_evaluated"`
	// Bad are examples of what could not be read (a key, a stream
	// sequence), for the operator to look at.
	Bad []string `json:"unreadable_examples,omitempty"`
}

// NewReport is an empty report.
func NewReport() *Report {
	return &Report{Tools: map[string]*ToolReport{}, Skipped: map[string]int{}}
}

func (r *Report) tool(name string) *ToolReport {
	t := r.Tools[name]
	if t == nil {
		t = &ToolReport{Tool: name, Skipped: map[string]int{}}
		r.Tools[name] = t
	}
	return t
}

// Add counts one re-evaluated call of tool: its recorded fate and status,
// and the fate the new definitions give it.
func (r *Report) Add(tool, callID string, was Fate, status call.Status, would Fate) {
	t := r.tool(tool)
	t.Seen++
	if was.same(would) {
		t.Unchanged++
		return
	}
	wasName := was.Was(status)
	wouldName := would.Would()
	for _, c := range t.Changes {
		if c.Was == wasName && c.Would == wouldName {
			c.Count++
			if len(c.Examples) < Examples {
				c.Examples = append(c.Examples, callID)
			}
			return
		}
	}
	t.Changes = append(t.Changes, &Change{Was: wasName, Would: wouldName, Why: would.Why, Count: 1, Examples: []string{callID},
		Refused: was.Kind == Pass && would.Kind == Refused})
}

// Skip counts a call of tool ("" when unknown) that was not re-evaluated,
// and why.
func (r *Report) Skip(tool, reason string) {
	r.Skipped[reason]++
	if tool != "" {
		r.tool(tool).Skipped[reason]++
	}
}

// BadExample keeps an example of something unreadable (a few at most).
func (r *Report) BadExample(what string) {
	if len(r.Bad) < Examples {
		r.Bad = append(r.Bad, what)
	}
}

// Refused is how many calls that passed every gate would now be stopped.
func (r *Report) Refused() int {
	n := 0
	for _, t := range r.Tools {
		for _, c := range t.Changes {
			if c.Refused {
				n += c.Count
			}
		}
	}
	return n
}

// Sorted is the tools' tables by name, each's changes largest first.
func (r *Report) Sorted() []*ToolReport {
	var out []*ToolReport
	for _, t := range r.Tools {
		sort.SliceStable(t.Changes, func(i, j int) bool {
			if t.Changes[i].Count != t.Changes[j].Count {
				return t.Changes[i].Count > t.Changes[j].Count
			}
			return t.Changes[i].Was+t.Changes[i].Would < t.Changes[j].Was+t.Changes[j].Would
		})
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out
}

// Print writes the tables as text.
func (r *Report) Print(w io.Writer) {
	tools := r.Sorted()
	if len(tools) == 0 {
		fmt.Fprintln(w, "no recorded calls in the window")
	}
	for _, t := range tools {
		fmt.Fprintf(w, "tool %s: %d seen, %d unchanged, %d would change\n", t.Tool, t.Seen, t.Unchanged, t.Seen-t.Unchanged)
		for _, c := range t.Changes {
			why := ""
			if c.Why != "" {
				why = " (" + c.Why + ")"
			}
			fmt.Fprintf(w, "  %6d  %s → %s%s   e.g. %s\n", c.Count, c.Was, c.Would, why, strings.Join(c.Examples, " "))
		}
		for _, k := range sortedKeys(t.Skipped) {
			fmt.Fprintf(w, "  %6d  not re-evaluated: %s\n", t.Skipped[k], k)
		}
	}
	if n := total(r.Skipped); n > 0 {
		fmt.Fprintf(w, "not re-evaluated: %d\n", n)
		for _, k := range sortedKeys(r.Skipped) {
			fmt.Fprintf(w, "  %6d  %s\n", r.Skipped[k], k)
		}
	}
	if len(r.Bad) > 0 {
		fmt.Fprintf(w, "unreadable, e.g.: %s\n", strings.Join(r.Bad, ", "))
	}
	if n := r.Refused(); n > 0 {
		fmt.Fprintf(w, "%d call(s) that passed every gate would now be refused\n", n)
	}
	if len(tools) > 0 {
		fmt.Fprintln(w, "see one call: toolgate status CALL_ID")
	}
}

// JSON is the report as --json prints it.
func (r *Report) JSON() any {
	return struct {
		Tools   []*ToolReport  `json:"tools"`
		Skipped map[string]int `json:"not_re_evaluated"`
		Bad     []string       `json:"unreadable_examples,omitempty"`
		Refused int            `json:"refused"`
	}{r.Sorted(), r.Skipped, r.Bad, r.Refused()}
}

func sortedKeys(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
