package cmdutil

import (
	"strings"

	"github.com/toolgate/toolgate/internal/call"
	"github.com/toolgate/toolgate/internal/redact"
)

// How an unregistered tool name is shown. Status records, lists, logs,
// audit events and metrics carry its public form, unregistered:<12 hex>
// (redact.ToolName), for every reader, the console's viewers included: a
// model may have put a secret or 70 KB into the name, and those records
// are read widely and copied into tickets. The name itself is evidence,
// kept only in the call's dead letter, which an operator opens on purpose
// (dlq show, the console's dead-letter page), and in the tool-result
// message returned to the producer that sent it. So an operator and a
// viewer see the same public form in records and lists, and each view
// points at the other: status says where the name is, dlq show prints the
// public form beside it.

// UnregisteredNote follows a status record's tool: where the name the
// model wrote is, when the record carries only its public form.
func UnregisteredNote(tool, callID string) string {
	if !strings.HasPrefix(tool, "unregistered:") {
		return ""
	}
	return "  (not a registered tool; the name as the model wrote it is only in the call's dead letter: toolgate dlq ls --call " + callID + ")"
}

// LetterToolNote follows a dead letter's tool name when the call named no
// registered tool: the public form that status, calls and the logs show.
func LetterToolNote(name string, failure call.Status) string {
	if failure != call.NoSuchTool || name == "" {
		return ""
	}
	return "; not registered: status, calls ls, the logs and the console's Calls page show it as " + redact.ToolName(name, nil)
}
