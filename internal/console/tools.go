package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/toolgate/toolgate/internal/canon"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/registry"
	"github.com/toolgate/toolgate/internal/tool"
	"github.com/toolgate/toolgate/streams"
)

// toolSet is the stored definitions, read for one page.
type toolSet struct {
	defs map[string]tool.Definition
	revs map[string]uint64
	bad  map[string]string // unreadable definitions: why
}

func (t toolSet) sensitive(name string) []string { return t.defs[name].Sensitive }

// toolCache reads every definition of the tools bucket; an unreadable
// bucket gives an empty set (pages then redact by secret-like names only).
func (s *Server) toolCache(ctx context.Context) toolSet {
	t := toolSet{defs: map[string]tool.Definition{}, revs: map[string]uint64{}, bad: map[string]string{}}
	kv, err := s.cfg.JS.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		return t
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return t
	}
	defer w.Stop()
	for seen := 0; seen < maxScan; seen++ {
		var e jetstream.KeyValueEntry
		select {
		case e = <-w.Updates():
		case <-ctx.Done():
			return t
		}
		if e == nil {
			break
		}
		d, err := registry.Decode(e.Key(), e.Value())
		if err != nil {
			t.bad[e.Key()] = shortErr(err)
			continue
		}
		t.defs[e.Key()], t.revs[e.Key()] = d, e.Revision()
	}
	return t
}

// redactJSON is raw redacted by the audit's rules (redact.Arguments with
// the tool's sensitive_fields).
func redactJSON(raw []byte, sensitive []string) string {
	return redact.Arguments(raw, redact.Options{SensitiveFields: sensitive})
}

// toolRow is one tool on the tools page.
type toolRow struct {
	Name, Risk, Approval, Executor, Description string
	Revision                                    uint64
	Rules                                       int
	Bad                                         string
}

func (s *Server) toolsPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.timeout(r.Context())
	defer cancel()
	t := s.toolCache(ctx)
	var rows []toolRow
	for name, d := range t.defs {
		risk, appr := d.PolicyColumns()
		rows = append(rows, toolRow{Name: name, Revision: t.revs[name], Risk: risk, Approval: appr, Executor: d.Where(), Description: d.Description, Rules: len(d.Rules)})
	}
	for name, why := range t.bad {
		rows = append(rows, toolRow{Name: name, Bad: why})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	s.render(w, r, "tools", "Tools", rows)
}

// revision is one stored revision of a tool.
type revision struct {
	Revision uint64
	At       time.Time
	Deleted  bool
	JSON     string
	Changed  []string // top-level fields that differ from the revision before
	raw      []byte
}

type toolView struct {
	Name      string
	Def       *tool.Definition
	Revision  uint64
	Risk      string
	Approval  string
	Executor  string
	Policy    string
	Rules     string
	Schema    string
	JSON      string
	Revisions []revision
	Bad       string
}

func (s *Server) toolPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !toolName(name) {
		s.fail(w, r, http.StatusNotFound, "no such tool")
		return
	}
	ctx, cancel := s.timeout(r.Context())
	defer cancel()
	kv, err := s.cfg.JS.KeyValue(ctx, streams.BucketTools)
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, "tools: "+shortErr(err))
		return
	}
	v := toolView{Name: name}
	hist, err := kv.History(ctx, name)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		s.fail(w, r, http.StatusNotFound, "no tool "+name+" is registered")
		return
	}
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, "tools: "+shortErr(err))
		return
	}
	var prev []byte
	for _, e := range hist {
		rv := revision{Revision: e.Revision(), At: e.Created(), Deleted: e.Operation() != jetstream.KeyValuePut, JSON: prettyJSON(e.Value()), raw: e.Value()}
		if !rv.Deleted && prev != nil {
			rv.Changed = changedFields(prev, rv.raw)
		}
		if !rv.Deleted {
			prev = rv.raw
		}
		v.Revisions = append([]revision{rv}, v.Revisions...) // newest first
	}
	if d, rev, err := registry.Get(ctx, kv, name); err == nil {
		v.Def, v.Revision = &d, rev
		v.Risk, v.Approval = d.PolicyColumns()
		v.Executor = d.Where()
		v.Policy = prettyJSON(d.Policy)
		if len(d.Rules) > 0 {
			v.Rules = prettyJSON(d.Rules)
		}
		v.Schema = prettyJSON(d.InputSchema)
		v.JSON = prettyJSON(d)
	} else if !errors.Is(err, jetstream.ErrKeyNotFound) {
		v.Bad = shortErr(err)
	}
	s.render(w, r, "tool", "Tool "+name, v)
}

// toolName is internal/tool's name rule: one subject token.
func toolName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// changedFields lists the top-level fields of two stored definitions that
// differ (by their canonical JSON); nil when either is not an object.
func changedFields(old, cur []byte) []string {
	var a, b map[string]json.RawMessage
	if json.Unmarshal(old, &a) != nil || json.Unmarshal(cur, &b) != nil {
		return nil
	}
	var out []string
	for k, v := range b {
		if w, ok := a[k]; !ok || !sameJSON(v, w) {
			out = append(out, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func sameJSON(a, b json.RawMessage) bool {
	ca, err1 := canon.JSON(a)
	cb, err2 := canon.JSON(b)
	return err1 == nil && err2 == nil && string(ca) == string(cb)
}
