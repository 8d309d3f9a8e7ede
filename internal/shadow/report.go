package shadow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/whatif"
)

// MaxChanges bounds the lines of one tool's record; differences past it
// are counted in More.
const MaxChanges = 32

// maxKeys bounds the report keys read (a key per tool of the shadow).
const maxKeys = 10000

// Record is one tool's differences in the report bucket
// (streams.BucketShadowReport), under the tool's name: counts, a few call
// ids, and reasons taken from the definitions, never from arguments.
type Record struct {
	Shadow    string           `json:"shadow"` // Revision.ID it counts for
	Tool      string           `json:"tool"`
	Seen      int              `json:"seen"`
	Unchanged int              `json:"unchanged"`
	Changes   []*whatif.Change `json:"changes"`
	More      int              `json:"more,omitempty"` // differences past MaxChanges lines
}

// add counts one compared call into r.
func (r *Record) add(callID string, was, would whatif.Fate, wasName, why string) {
	r.Seen++
	if was.Kind == would.Kind && was.Class == would.Class {
		r.Unchanged++
		return
	}
	c := &whatif.Change{Was: wasName, Would: would.Would(), Why: why, Count: 1, Examples: []string{callID},
		Refused: was.Kind == whatif.Pass && would.Kind == whatif.Refused}
	r.merge(c)
}

// merge adds change c (counts and examples) to r's lines.
func (r *Record) merge(c *whatif.Change) {
	for _, x := range r.Changes {
		if x.Was == c.Was && x.Would == c.Would {
			x.Count += c.Count
			for _, id := range c.Examples {
				if len(x.Examples) < whatif.Examples {
					x.Examples = append(x.Examples, id)
				}
			}
			return
		}
	}
	if len(r.Changes) >= MaxChanges {
		r.More += c.Count
		return
	}
	cp := *c
	cp.Examples = append([]string(nil), c.Examples...)
	r.Changes = append(r.Changes, &cp)
}

// addAll adds the counts of d (of the same shadow) to r.
func (r *Record) addAll(d *Record) {
	r.Seen += d.Seen
	r.Unchanged += d.Unchanged
	r.More += d.More
	for _, c := range d.Changes {
		r.merge(c)
	}
}

// clearReport deletes every record of the report bucket.
func clearReport(ctx context.Context, reports jetstream.KeyValue) error {
	keys, err := reports.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("shadow: clear the report: %w", err)
	}
	for _, k := range keys {
		if err := reports.Purge(ctx, k); err != nil {
			return fmt.Errorf("shadow: clear the report: %w", err)
		}
	}
	return nil
}

// Read builds the report of shadow id from the report bucket: a table per
// tool (whatif.Report, printed as the what-if prints it). Records of
// another shadow are left out; an unreadable one is named in Bad.
func Read(ctx context.Context, reports jetstream.KeyValue, id string) (*whatif.Report, error) {
	rep := whatif.NewReport()
	w, err := reports.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("shadow: read the report: %w", err)
	}
	defer w.Stop()
	for n := 0; n < maxKeys; n++ {
		var e jetstream.KeyValueEntry
		select {
		case e = <-w.Updates():
		case <-ctx.Done():
			return nil, fmt.Errorf("shadow: read the report: %w", ctx.Err())
		}
		if e == nil {
			break
		}
		var r Record
		if err := json.Unmarshal(e.Value(), &r); err != nil || r.Tool == "" {
			rep.BadExample("report key " + e.Key())
			continue
		}
		if r.Shadow != id {
			continue
		}
		t := &whatif.ToolReport{Tool: r.Tool, Seen: r.Seen, Unchanged: r.Unchanged, Changes: r.Changes, Skipped: map[string]int{}}
		if r.More > 0 {
			t.Changes = append(t.Changes, &whatif.Change{Was: "other", Would: "other differences (past the report's bound, counted only)", Count: r.More})
		}
		rep.Tools[r.Tool] = t
	}
	return rep, nil
}
