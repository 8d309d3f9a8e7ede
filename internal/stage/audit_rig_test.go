package stage

import (
	"encoding/json"
	"strings"

	"github.com/toolgate/toolgate/internal/pipeline"
	"github.com/toolgate/toolgate/streams"
)

// resultAudits is the audit event of every result TOOLGATE_RESULTS holds
// that carries one (issue 30: the audit rides in the result), oldest first.
func (p *pipe) resultAudits() []pipeline.AuditEvent {
	p.t.Helper()
	st, err := p.js.Stream(p.ctx, streams.StreamResults)
	if err != nil {
		p.t.Fatal(err)
	}
	info, err := st.Info(p.ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	var out []pipeline.AuditEvent
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(p.ctx, seq)
		if err != nil {
			continue
		}
		var r pipeline.Result
		if json.Unmarshal(m.Data, &r) == nil && r.Audit != nil {
			out = append(out, *r.Audit)
		}
	}
	return out
}

// resultAuditText is every audit event the results carry, as JSON, one a
// line.
func (p *pipe) resultAuditText() string {
	p.t.Helper()
	var b strings.Builder
	for _, ev := range p.resultAudits() {
		data, err := json.Marshal(ev)
		if err != nil {
			p.t.Fatal(err)
		}
		b.Write(data)
		b.WriteString("\n")
	}
	return b.String()
}
