package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrResultShape: the call is answered with a value only the executor can
// give (a computer_call with a screenshot, a client tool_search_call with the
// tools it found), and the outcome holds none — a refusal, a failure, a dry
// run, or a result of another shape. Text cannot stand in for it.
var ErrResultShape = errors.New("provider: openai-responses: this call is answered with the executor's result in the item's own shape")

// respToolResult answers a call in its item's own output format. The kind is
// Answer.Kind, or, when the pipeline did not carry it, a tool named after a
// built-in kind (the names are the item types, so no function shares them):
//
//	function_call        {"type":"function_call_output","call_id":ID,"output":Text}
//	custom_tool_call     {"type":"custom_tool_call_output","call_id":ID,"output":Text}
//	local_shell_call     {"type":"local_shell_call_output","call_id":ID,"output":Text}
//	shell_call           {"type":"shell_call_output","call_id":ID,"output":[{"stdout","stderr","outcome"}]}
//	apply_patch_call     {"type":"apply_patch_call_output","call_id":ID,"status":"completed"|"failed","output":Text}
//	computer_call        {"type":"computer_call_output","call_id":ID,"output":{"type":"computer_screenshot",...}}
//	mcp_approval_request {"type":"mcp_approval_response","approval_request_id":ID,"approve":bool[,"reason":Text]}
//	tool_search_call     {"type":"tool_search_output","call_id":ID,"execution":"client","status":"completed","tools":[...]}
//	any other X          {"type":X+"_output","call_id":ID,"output":Text}
//
// shell_call takes the executor's own output list when its result is one
// (or an object holding one); otherwise Text is one command's stdout (OK) or
// stderr with exit code 1. An MCP approval is approved only when the call
// ran (OK), never by a dry run. computer_call and tool_search_call need the
// executor's result (a computer_screenshot object, or {"output": it,
// "acknowledged_safety_checks": [...]}; a tools array or {"tools": [...]}):
// without one the error wraps ErrResultShape.
func respToolResult(a Answer) (json.RawMessage, error) {
	id, err := a.requireID()
	if err != nil {
		return nil, err
	}
	kind := a.Kind
	if kind == "" && builtinKind(a.Tool) {
		kind = a.Tool
	}
	ran := a.OK && !a.TextOnly
	switch kind {
	case "", "function_call":
		return textOutput("function_call_output", id, a.Text)
	case KindShell:
		return marshalResult(struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		}{"shell_call_output", id, shellOutput(a, ran)})
	case KindApplyPatch:
		status := "failed"
		if a.OK {
			status = "completed"
		}
		return marshalResult(struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Status string `json:"status"`
			Output string `json:"output"`
		}{"apply_patch_call_output", id, status, a.Text})
	case KindComputer:
		shot, acks := resultMember(a.Result, ran, "output", func(v map[string]json.RawMessage) bool {
			return string(bytes.TrimSpace(v["type"])) == `"computer_screenshot"`
		})
		if shot == nil {
			return nil, fmt.Errorf("%w: a computer_call is answered with a screenshot ({\"type\":\"computer_screenshot\",\"image_url\":...}); the outcome was: %s", ErrResultShape, a.Text)
		}
		return marshalResult(struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
			Acks   json.RawMessage `json:"acknowledged_safety_checks,omitempty"`
		}{"computer_call_output", id, shot, acks["acknowledged_safety_checks"]})
	case KindMCPApproval:
		reason := ""
		if !ran {
			reason = a.Text
		}
		return marshalResult(struct {
			Type    string `json:"type"`
			ID      string `json:"approval_request_id"`
			Approve bool   `json:"approve"`
			Reason  string `json:"reason,omitempty"`
		}{"mcp_approval_response", id, ran, reason})
	case KindToolSearch:
		tools := resultArray(a.Result, ran, "tools")
		if tools == nil {
			return nil, fmt.Errorf("%w: a client tool_search_call is answered with the tools found (a JSON array, or {\"tools\": [...]}); the outcome was: %s", ErrResultShape, a.Text)
		}
		return marshalResult(struct {
			Type      string          `json:"type"`
			CallID    string          `json:"call_id"`
			Execution string          `json:"execution"`
			Status    string          `json:"status"`
			Tools     json.RawMessage `json:"tools"`
		}{"tool_search_output", id, "client", "completed", tools})
	}
	return textOutput(strings.TrimSuffix(kind, "_request")+"_output", id, a.Text)
}

func textOutput(typ, id, text string) (json.RawMessage, error) {
	return marshalResult(struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}{typ, id, text})
}

// shellOutput is the executor's output list, or Text as one command's output.
func shellOutput(a Answer, ran bool) json.RawMessage {
	if list := resultArray(a.Result, ran, "output"); list != nil {
		return list
	}
	type outcome struct {
		Type     string `json:"type"`
		ExitCode int    `json:"exit_code"`
	}
	chunk := struct {
		Stdout  string  `json:"stdout"`
		Stderr  string  `json:"stderr"`
		Outcome outcome `json:"outcome"`
	}{Outcome: outcome{Type: "exit"}}
	if a.OK {
		chunk.Stdout = a.Text
	} else {
		chunk.Stderr, chunk.Outcome.ExitCode = a.Text, 1
	}
	out, _ := marshalResult([]any{chunk})
	return out
}

// resultArray is the result when it is a JSON array, or its member key when
// that is one; nil otherwise or when the call did not run.
func resultArray(result json.RawMessage, ran bool, key string) json.RawMessage {
	if !ran {
		return nil
	}
	if t := bytes.TrimSpace(result); len(t) > 0 && t[0] == '[' && json.Valid(t) {
		return t
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil {
		return nil
	}
	if t := bytes.TrimSpace(m[key]); len(t) > 0 && t[0] == '[' {
		return t
	}
	return nil
}

// resultMember is the result when ok accepts it, or its member key when ok
// accepts that (with the result's other members); nil when neither or when
// the call did not run.
func resultMember(result json.RawMessage, ran bool, key string, ok func(map[string]json.RawMessage) bool) (json.RawMessage, map[string]json.RawMessage) {
	if !ran {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil {
		return nil, nil
	}
	if ok(m) {
		return bytes.TrimSpace(result), nil
	}
	var inner map[string]json.RawMessage
	if json.Unmarshal(m[key], &inner) == nil && ok(inner) {
		return bytes.TrimSpace(m[key]), m
	}
	return nil, nil
}
