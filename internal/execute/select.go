package execute

import (
	"context"
	"fmt"
	"net/http"

	"github.com/nats-io/nats.go"

	"github.com/toolgate/toolgate/internal/result"
	"github.com/toolgate/toolgate/internal/tool"
)

// Selector picks a tool's executor from its definition: executor.type
// "http" POSTs to executor.url (status queries at executor.status_url), only
// to a destination Allow permits; "nats" or none requests on
// executor.subject, default toolgate.exec.<tool>; "mcp" calls
// executor.tool (default the tool's name) on the MCP server at executor.url
// (only where Allow permits) or started as executor.command. Every request is signed by
// Signer. Any other type gets an executor that runs nothing (ErrCannotRun).
type Selector struct {
	NC        *nats.Conn
	Signer    *Signer
	Allow     *Destinations // HTTP destinations; nil: none
	Client    *http.Client  // nil: Allow.Client(); tests only, it bypasses Allow
	MaxResult int           // 0: DefaultMaxResult; never over result.Limit of NC's max payload
	MCP       *MCPPool      // stdio MCP servers, shared by every tool naming one; nil: one per call
	Commands  []string      // the stdio MCP commands it may start (--exec-mcp-commands); nil: none
}

// maxResult is MaxResult bounded by what NC can carry.
func (s Selector) maxResult() int {
	n := s.MaxResult
	if n <= 0 {
		n = DefaultMaxResult
	}
	if s.NC != nil {
		n = min(n, result.Limit(s.NC.MaxPayload()))
	}
	return n
}

// For returns the executor of tool t.
func (s Selector) For(t *tool.Compiled) Executor {
	d := t.Def.Executor
	if d.Type == "mcp" {
		name := d.Tool
		if name == "" {
			name = t.Def.Name
		}
		return &MCP{URL: d.URL, Command: d.Command, Args: d.Args, Tool: name, Allow: s.Allow, Pool: s.MCP, Commands: s.Commands, MaxResult: s.maxResult(),
			Signer: s.Signer, StatusTool: d.StatusTool}
	}
	if d.Type == "http" {
		h := &HTTP{URL: d.URL, StatusURL: d.StatusURL, Signer: s.Signer, Allow: s.Allow, Client: s.Client, MaxResult: s.MaxResult}
		if h.MaxResult <= 0 {
			h.MaxResult = DefaultMaxResult
		}
		if s.NC != nil {
			h.MaxResult = min(h.MaxResult, result.Limit(s.NC.MaxPayload()))
		}
		return h
	}
	if d.Type != "" && d.Type != "nats" {
		return unknownType(d.Type)
	}
	n := &NATS{NC: s.NC, Signer: s.Signer, MaxResult: s.MaxResult}
	if d.Subject != "" {
		subj := d.Subject
		n.Subject = func(string) string { return subj }
	}
	return n
}

// unknownType is the executor of a definition whose executor type this
// execute stage does not know (a definition that did not pass tools apply,
// or written by a newer toolgate): it runs nothing.
type unknownType string

// Execute implements Executor: ErrCannotRun, always.
func (u unknownType) Execute(context.Context, Request) (Reply, error) {
	return Reply{}, fmt.Errorf("%w: %w: executor type %q is not one this execute stage knows (nats, http, mcp)", ErrNotRun, ErrCannotRun, string(u))
}
