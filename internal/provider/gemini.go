package provider

import (
	"bytes"
	"encoding/json"
	"encoding/json/jsontext"
	"errors"
	"fmt"
)

// Gemini is the provider name of the Gemini generateContent API.
const Gemini = "gemini"

// Gemini generateContent / streamGenerateContent (AI Studio and Vertex AI).
// Calls are functionCall parts, with args as an object, or (Vertex streaming
// function-call arguments) a functionCall {name, willContinue} followed by
// partialArgs fragments and closed by a functionCall without willContinue.
// Gemini says STOP for function calls, so STOP with calls is tool_calls.
// Only candidate 0 is read. Thought parts are not visible text.

type gemFunctionCall struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Args         jsontext.Value `json:"args"`
	PartialArgs  []partialArg   `json:"partialArgs"`
	WillContinue bool           `json:"willContinue"`
}

type gemPart struct {
	Text         *wireString      `json:"text"`
	Thought      bool             `json:"thought"`
	FunctionCall *gemFunctionCall `json:"functionCall"`
}

type gemCandidate struct {
	Index   int `json:"index"`
	Content *struct {
		Parts []gemPart `json:"parts"`
	} `json:"content"`
	FinishReason jsontext.Value `json:"finishReason"`
}

type gemChunk struct {
	Candidates    []gemCandidate `json:"candidates"`
	UsageMetadata *struct {
		CandidatesTokenCount int `json:"candidatesTokenCount"`
		ThoughtsTokenCount   int `json:"thoughtsTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion   string `json:"modelVersion"`
	ResponseID     string `json:"responseId"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	Error jsontext.Value `json:"error"`
}

var errGemShape = errors.New("provider: gemini: not a generateContent response: expected candidates, usageMetadata, promptFeedback or error")

// gemWhole reads one response object, or the JSON array of chunks that
// streamGenerateContent returns without alt=sse.
func gemWhole(body []byte, s *state) error {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var chunks []jsontext.Value
		if err := unmarshal(Gemini, body, &chunks); err != nil {
			return err
		}
		if len(chunks) == 0 {
			return errors.New("provider: gemini: empty chunk array")
		}
		for _, c := range chunks {
			if err := gemEvent(c, s); err != nil {
				return err
			}
		}
		return nil
	}
	return gemEvent(body, s)
}

func gemEvent(ev []byte, s *state) error {
	var c gemChunk
	if err := unmarshal(Gemini, ev, &c); err != nil {
		return err
	}
	if c.Candidates == nil && c.UsageMetadata == nil && c.PromptFeedback == nil && len(c.Error) == 0 {
		return errGemShape
	}
	cand := gemFirst(c.Candidates)
	if s.done && cand != nil && cand.Content != nil && len(cand.Content.Parts) > 0 {
		return ErrAfterTerminal
	}
	if cand != nil && cand.Content != nil {
		for _, p := range cand.Content.Parts { // reject before changing anything
			if err := gemCheck(p.FunctionCall); err != nil {
				return err
			}
		}
	}
	if c.ResponseID != "" {
		s.id = c.ResponseID
	}
	if c.ModelVersion != "" {
		s.model = c.ModelVersion
	}
	if u := c.UsageMetadata; u != nil && u.CandidatesTokenCount+u.ThoughtsTokenCount > 0 {
		// The output cap counts thinking tokens too.
		s.outputTokens = u.CandidatesTokenCount + u.ThoughtsTokenCount
	}
	if e := decodeError(c.Error); e != nil {
		s.setError(e)
		return nil
	}
	if pf := c.PromptFeedback; pf != nil && pf.BlockReason != "" {
		s.finish, s.providerFinish, s.done = ReasonContentFilter, pf.BlockReason, true
	}
	if cand == nil {
		return nil
	}
	if cand.Content != nil {
		for i := range cand.Content.Parts {
			if err := s.gemPart(&cand.Content.Parts[i]); err != nil {
				return err
			}
		}
	}
	if w := scalarString(cand.FinishReason); w != "" {
		s.finish, s.providerFinish, s.done = geminiReason(w), w, true
	}
	return nil
}

func gemFirst(cs []gemCandidate) *gemCandidate {
	for i := range cs {
		if cs[i].Index == 0 {
			return &cs[i]
		}
	}
	return nil
}

func (s *state) gemPart(p *gemPart) error {
	if p.Text != nil && !p.Thought {
		s.text.WriteString(string(*p.Text))
	}
	fc := p.FunctionCall
	if fc == nil {
		return nil
	}
	c := s.gemOpen
	if fc.Name != "" {
		if c != nil { // a new call before the previous one closed
			c.open, c.truncWhy = false, "next call began before this one closed"
		}
		c = s.newCall(len(s.calls))
		c.id, c.name, c.object = fc.ID, fc.Name, true
		c.args = []byte("{}")
		if len(fc.Args) > 0 && string(fc.Args) != "null" {
			obj, err := objectArgs(fc.Args)
			if err != nil {
				return fmt.Errorf("provider: gemini: functionCall %s args: %w", fc.Name, err)
			}
			c.args = obj
		}
		s.gemOpen = nil
	}
	if c == nil {
		return nil // a stray terminator or separator
	}
	for _, a := range fc.PartialArgs {
		if c.partial == nil {
			c.partial = &partialArgs{}
		}
		if err := c.partial.apply(a); err != nil {
			return err
		}
	}
	if c.id == "" {
		c.id = fc.ID
	}
	c.open = fc.WillContinue
	if c.open {
		s.gemOpen = c
	} else {
		s.gemOpen = nil
	}
	return nil
}

// gemCheck rejects a functionCall whose args are not an object or whose
// partialArgs paths do not parse.
func gemCheck(fc *gemFunctionCall) error {
	if fc == nil {
		return nil
	}
	if len(fc.Args) > 0 && fc.Args[0] != '{' && string(fc.Args) != "null" {
		return fmt.Errorf("provider: gemini: functionCall %s args must be an object", fc.Name)
	}
	for _, a := range fc.PartialArgs {
		segs, err := splitJSONPath(a.JSONPath)
		if err != nil {
			return err
		}
		if segs[0].isIdx {
			return fmt.Errorf("provider: gemini: partialArgs %s: arguments must be an object", a.JSONPath)
		}
		if n := a.NumberValue; len(n) > 0 && n[0] != '-' && (n[0] < '0' || n[0] > '9') {
			return fmt.Errorf("provider: gemini: partialArgs %s: numberValue is not a number", a.JSONPath)
		}
	}
	return nil
}

// gemToolResult: the part
// {"functionResponse":{"name":Tool,"id":ProviderCallID,"response":{...}}}
// with response {"output":result} when OK and {"error":Text} otherwise (the
// keys Gemini documents); "id" only when the call had one. The caller wraps
// the parts of one response in {"role":"user","parts":[...]}.
func gemToolResult(a Answer) (json.RawMessage, error) {
	if a.Tool == "" {
		return nil, ErrNoToolName
	}
	type functionResponse struct {
		Name     string         `json:"name"`
		ID       string         `json:"id,omitempty"`
		Response map[string]any `json:"response"`
	}
	return marshalResult(struct {
		FunctionResponse functionResponse `json:"functionResponse"`
	}{functionResponse{Name: a.Tool, ID: a.ProviderCallID, Response: gemResponse(a)}})
}

// gemResponse builds functionResponse.response, which Gemini requires to be
// an object: "output" for the function's output, "error" for failures.
func gemResponse(a Answer) map[string]any {
	if !a.OK {
		return map[string]any{"error": a.Text}
	}
	trimmed := bytes.TrimSpace(a.Result)
	switch {
	case a.TextOnly || len(trimmed) == 0:
		return map[string]any{"output": a.Text}
	case json.Valid(trimmed):
		return map[string]any{"output": json.RawMessage(trimmed)}
	default:
		return map[string]any{"output": string(trimmed)}
	}
}
