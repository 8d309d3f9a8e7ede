// Package tool defines a tool as toolgate knows it and loads definitions in
// the forms users already have: toolgate's own YAML or JSON, OpenAI `tools`
// arrays (`parameters`), Anthropic tools (`input_schema`) and MCP
// `tools/list` results (`inputSchema`).
package tool

import (
	"encoding/json"

	"github.com/toolgate/toolgate/internal/limit"
	"github.com/toolgate/toolgate/internal/parse"
	"github.com/toolgate/toolgate/internal/policy"
	"github.com/toolgate/toolgate/internal/rules"
)

// Definition is one tool. Field names are the YAML/JSON keys.
type Definition struct {
	Name         string                   `json:"name"`
	Description  string                   `json:"description,omitempty"`
	InputSchema  json.RawMessage          `json:"input_schema"`
	Rules        []rules.Rule             `json:"rules,omitempty"`
	Placeholders *rules.PlaceholderConfig `json:"placeholders,omitempty"`
	Policy       *policy.Policy           `json:"policy,omitempty"`
	Executor     Executor                 `json:"executor,omitzero"`
	Repair       Repair                   `json:"repair,omitzero"`
	Atomic       bool                     `json:"atomic,omitempty"` // calls of a response that include this tool run all or none
	Sensitive    []string                 `json:"sensitive_fields,omitempty"`
	Cosmetic     *parse.Cosmetic          `json:"cosmetic_repair,omitempty"`
	// Limits meter the tool's executions (internal/limit): its own, and
	// those of the file's top-level limits: that cover it.
	Limits []limit.Limit `json:"limits,omitempty"`
}

// Executor says how an approved call is run.
type Executor struct {
	Type    string `json:"type,omitempty"`    // "nats" (default), "http" or "mcp"
	Subject string `json:"subject,omitempty"` // nats: default toolgate.exec.<tool>
	URL     string `json:"url,omitempty"`     // http: the endpoint POSTed to; mcp: a streamable HTTP server
	Timeout string `json:"timeout,omitempty"` // Go duration; default 10s
	// Command and Args (mcp) start a stdio MCP server, once per execute
	// process and reused; URL and Command are exclusive.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Tool (mcp) is the MCP tool called; default the toolgate tool's name.
	Tool string `json:"tool,omitempty"`
	// StatusURL (http, optional) answers "did call X happen?" to
	// GET StatusURL?idempotency_key=K with {"known": bool, "ok", "result",
	// "error"}; the execute gate asks it before recording outcome_unknown.
	StatusURL string `json:"status_url,omitempty"`
	// Group is the executor group the tool's calls wait in and run under:
	// its own durable, concurrency and circuit breaker (issue 38). Tools
	// that name the same group share them; default: a group of its own
	// (the tool's name), the strongest isolation.
	Group string `json:"group,omitempty"`
	// Concurrency is how many of the group's calls run at once (default
	// execgroup.DefaultConcurrency). Tools of one group should agree;
	// the largest wins.
	Concurrency int `json:"concurrency,omitempty"`
	// CircuitOpen is what a call of the group does while its circuit is
	// open: "wait" (default) in the group's queue until the executor is
	// back, or "fail" at once, execution_failed with the error
	// circuit_open (a dead letter to replay). A group fails fast only when
	// all its tools say fail: waiting loses nothing.
	CircuitOpen string `json:"circuit_open,omitempty"`
	// Retry is the group's retry schedule after its executor failed (no
	// responders, connection refused, 5xx not processed). Tools of one
	// group should agree; the first by name that sets one wins.
	Retry *Retry `json:"retry,omitempty"`
	// StatusTool (mcp, optional) is the MCP tool asked whether a call
	// happened, when the server lists it; default toolgate_status.
	StatusTool string `json:"status_tool,omitempty"`
}

// Retry is an executor group's retry schedule: at most Attempts attempts
// of a call (0: the deployment's MaxDeliver, 10), the n-th retry Backoff[n-1]
// after the failure, the last step repeating (none: 250ms doubling to 30s;
// a retry waits at least 1s, a scheduled message's resolution).
type Retry struct {
	Attempts int      `json:"attempts,omitempty"`
	Backoff  []string `json:"backoff,omitempty"` // Go durations, each 1s..24h
}

// Repair bounds the repair gate for this tool.
type Repair struct {
	MaxAttempts *int `json:"max_attempts,omitempty"` // default 1; 0 disables repair
	// AllowText offers the tool to the repairing model with automatic instead
	// of forced tool choice, so that a model missing information can say so in
	// text (needs_clarification) instead of being made to invent values. Off by
	// default: forced choice makes the answer a tool call.
	AllowText bool `json:"allow_text,omitempty"`
}

// MaxRepairs is the repair bound, default 1.
func (d *Definition) MaxRepairs() int {
	if d.Repair.MaxAttempts == nil {
		return 1
	}
	return *d.Repair.MaxAttempts
}
