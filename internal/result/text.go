package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/pkg/wire"
)

// maxListedErrors bounds how many problems Text lists, so that one call
// with thousands of schema errors does not flood the model's context.
const maxListedErrors = 20

// Text phrases the outcome for a model: what happened and what to do next.
//
// A successful call (OK) yields the executor's result JSON as it is (or a
// sentence naming the tool when there is no result). Every other outcome
// yields text that starts with "Error: ", names the tool, says that the call
// was not executed (or that it is unknown whether it was), lists o.Errors and
// says what to change. The prefix makes the failure unmistakable for
// providers whose tool result has no error flag (OpenAI, Gemini, Ollama).
func Text(o Outcome) string {
	tool := o.Tool
	if tool == "" {
		tool = "(unnamed tool)"
	}
	if o.OK {
		return okText(o, tool)
	}
	problems := list(o.Errors)
	switch wire.Status(o.Status) {
	case wire.Truncated:
		return fmt.Sprintf("Error: the call to %s was not executed: your arguments were cut off before they were complete (the output hit the token limit).%s\nSend a smaller payload: fewer items per call, or references (ids) instead of whole objects.", tool, problems)
	case wire.TransportIncomplete:
		return fmt.Sprintf("Error: the call to %s was not executed: the response stream ended before the call was complete.%s\nCall the tool again with the complete arguments.", tool, problems)
	case wire.InvalidJSON:
		return fmt.Sprintf("Error: the call to %s was not executed: its arguments are not valid JSON.%s\nSend the arguments again as one valid JSON object that matches the tool's schema.", tool, problems)
	case wire.SchemaInvalid:
		return fmt.Sprintf("Error: the call to %s was not executed: its arguments failed validation:%s\nFix these fields and call the tool again.", tool, problems)
	case wire.NoSuchTool:
		return noSuchToolText(o, tool)
	case wire.BusinessInvalid:
		return fmt.Sprintf("Error: the call to %s was not executed: the request is incomplete or inconsistent:%s\nDo not invent values. Ask the user for the missing or conflicting information, then call the tool again.", tool, problems)
	case wire.NeedsClarification:
		return fmt.Sprintf("Error: the call to %s was not executed: more information is needed:%s\nAsk the user for it. Do not invent values.", tool, problems)
	case wire.PolicyRejected:
		return fmt.Sprintf("Error: the call to %s was rejected: it is not permitted.%s\nDo not retry it or try to work around it; tell the user it is not allowed.", tool, problems)
	case wire.ApprovalRequired:
		return fmt.Sprintf("Error: the call to %s has not been executed: it needs a human's approval first.%s\nDo not call it again; its outcome will be reported once someone decides.", tool, problems)
	case wire.ApprovalDenied:
		return fmt.Sprintf("Error: the call to %s was not executed: a human reviewer denied it.%s\nDo not retry it; tell the user it was denied.", tool, problems)
	case wire.ApprovalExpired:
		return fmt.Sprintf("Error: the call to %s was not executed: it needed a human's approval and none was given in time.%s\nDo not retry it on your own; ask the user whether to try again.", tool, problems)
	case wire.ExecutionFailed, wire.Executed, wire.Failed:
		return fmt.Sprintf("Error: the call to %s failed while executing:%s\nIf the error points at your arguments, correct them and call the tool again; otherwise tell the user what failed.", tool, orNoDetail(problems))
	case wire.OutcomeUnknown:
		return fmt.Sprintf("Error: the call to %s may or may not have taken effect: it is not known whether it ran.%s\nDo not call it again; it will be reconciled and the outcome reported.", tool, problems)
	case wire.BatchAborted:
		return fmt.Sprintf("Error: the call to %s was not executed: it belongs to a batch that runs all or nothing, and another call of the batch failed, so none of the batch ran.%s\nFix the failed call and send the whole batch again.", tool, problems)
	case wire.OutputTooLarge:
		return fmt.Sprintf("Error: the call to %s did not complete: what toolgate had to record for it is too large to store, even cut.%s\nSend smaller arguments, or ask the tool for less at a time.", tool, problems)
	case wire.SealInvalid:
		return fmt.Sprintf("Error: the call to %s was not executed: it did not carry proof that every check passed it.%s\nDo not retry it; tell the user it could not be executed and that the operators were alerted.", tool, problems)
	case wire.StreamConflict:
		return fmt.Sprintf("Error: the call to %s was not executed: the response stream it came in was tampered with (its events disagree).%s\nNothing of that response ran; the user's application must send the response again.", tool, problems)
	case wire.ResponseIDConflict:
		return fmt.Sprintf("Error: the call to %s was not executed: its response id was already used for a different response.%s\nNothing of this response ran; it must be sent again under a new response id.", tool, problems)
	case wire.LimitExceeded:
		return fmt.Sprintf("Error: the call to %s was not executed: a usage limit (rate limit, quota or budget) is used up.%s\nDo not retry it at once; tell the user, or call it again after the time given.", tool, problems)
	case wire.IdempotencyConflict:
		return fmt.Sprintf("Error: the call to %s was not executed: a call with the same id was already made with different arguments.%s\nCheck the result of the earlier call before calling the tool again.", tool, problems)
	}
	status := o.Status
	if status == "" {
		status = "failed"
	}
	return fmt.Sprintf("Error: the call to %s was not executed (status %s).%s\nCorrect the call or tell the user what failed.", tool, status, problems)
}

// okText is the text of a successful call: the result JSON, or a sentence
// when there is none. A dry run says that nothing ran.
func okText(o Outcome, tool string) string {
	if c, cut := IsCut(o.Result); cut {
		return cutText(o, tool, c)
	}
	res := resultText(o.Result)
	if o.Status == string(wire.DryRun) {
		msg := fmt.Sprintf("The call to %s passed every check but was not executed (dry run).", tool)
		if res != "" {
			msg += "\nPreview: " + res
		}
		return msg
	}
	if res == "" {
		return fmt.Sprintf("The call to %s was executed and returned no result.", tool)
	}
	return res
}

// cutText is the text of a successful call whose result was cut to fit: it
// names the cut instead of repeating it, so the excerpt is carried once.
func cutText(o Outcome, tool string, c Cutout) string {
	what := "was executed"
	if o.Status == string(wire.DryRun) {
		what = "passed every check but was not executed (dry run)"
	}
	return fmt.Sprintf("The call to %s %s. Its result is %d bytes (sha256 %s), over the %d-byte limit toolgate passes on, so it was cut: the result field holds its first %d bytes. Ask the tool for less at a time (a narrower query, a page) if you need the rest.", tool, what, c.Bytes, c.SHA256, c.Limit, len(c.Excerpt))
}

// resultText returns the result as compact JSON, or as it is when it is not
// JSON; "" when there is no result at all.
func resultText(raw json.RawMessage) string {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, trimmed); err != nil {
		return string(trimmed)
	}
	return buf.String()
}

func noSuchToolText(o Outcome, tool string) string {
	msg := fmt.Sprintf("Error: there is no tool named %q, so nothing was executed.", tool)
	if len(o.ValidTools) > 0 {
		msg += " Valid tools: " + strings.Join(o.ValidTools, ", ") + "."
	}
	msg += list(o.Errors)
	return msg + "\nCall one of the tools you were given, by its exact name."
}

// list formats problems as "\n- a\n- b", at most maxListedErrors of them.
func list(errs []string) string {
	var b strings.Builder
	n := 0
	for _, e := range errs {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if n == maxListedErrors {
			fmt.Fprintf(&b, "\n- ... and %d more", countNonEmpty(errs)-n)
			break
		}
		b.WriteString("\n- ")
		b.WriteString(e)
		n++
	}
	return b.String()
}

func countNonEmpty(errs []string) int {
	n := 0
	for _, e := range errs {
		if strings.TrimSpace(e) != "" {
			n++
		}
	}
	return n
}

func orNoDetail(problems string) string {
	if problems == "" {
		return "\n- the executor reported no detail"
	}
	return problems
}
