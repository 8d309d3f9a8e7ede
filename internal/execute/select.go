package execute

import (
	"net/http"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/internal/tool"
)

// Selector picks a tool's executor from its definition: executor.type
// "http" POSTs to executor.url (status queries at executor.status_url);
// "nats" or none requests on executor.subject, default toolgate.exec.<tool>.
type Selector struct {
	NC     *nats.Conn
	Client *http.Client // nil: one that does not follow redirects
}

// For returns the executor of tool t.
func (s Selector) For(t *tool.Compiled) Executor {
	d := t.Def.Executor
	if d.Type == "http" {
		h := &HTTP{URL: d.URL, StatusURL: d.StatusURL, Client: s.Client}
		if s.NC != nil {
			h.MaxResult = result.Limit(s.NC.MaxPayload())
		}
		return h
	}
	n := &NATS{NC: s.NC}
	if d.Subject != "" {
		subj := d.Subject
		n.Subject = func(string) string { return subj }
	}
	return n
}
