package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// known reports whether a tool entry may carry key k. OpenAI, Anthropic
// and MCP keys that toolgate has no use for are accepted and ignored.
func known(k string) bool {
	switch k {
	case "name", "description", "input_schema", "parameters", "inputSchema",
		"rules", "placeholders", "policy", "executor", "repair",
		"atomic", "sensitive_fields", "cosmetic_repair", "limits",
		// foreign keys kept for compatibility
		"type", "function", "strict", "title", "annotations",
		"outputSchema", "_meta", "cache_control":
		return true
	}
	return false
}

// Load reads definitions from JSON or YAML 1.2 (a key or a value written
// on, no, y or off is a string; see toJSON). file names the source in errors.
// Accepted shapes: a list of tools; {"tools": [...]}; an MCP JSON-RPC
// response {"result": {"tools": [...]}}. Each entry may be toolgate's own,
// OpenAI's {"type":"function","function":{...}} (toolgate keys beside
// "function"), Anthropic's or MCP's. Any unknown key, missing name or schema,
// or duplicate name refuses the whole file.
func Load(file string, data []byte) ([]Definition, error) {
	js, err := toJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	items, limits, err := entries(js)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no tools found (expected a list, {tools: [...]} or an MCP tools/list result)", file)
	}
	seen := map[string]bool{}
	defs := make([]Definition, 0, len(items))
	for i, item := range items {
		d, err := entry(item)
		if err != nil {
			who := fmt.Sprintf("tool #%d", i+1)
			if d.Name != "" {
				who = "tool " + d.Name
			}
			return nil, fmt.Errorf("%s: %s: %w", file, who, err)
		}
		if seen[d.Name] {
			return nil, fmt.Errorf("%s: tool %s: defined twice", file, d.Name)
		}
		seen[d.Name] = true
		defs = append(defs, d)
	}
	if err := fileLimits(limits, defs); err != nil { // limits.go
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := checkGroups(defs); err != nil { // group.go
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return defs, nil
}

// entries returns the file's tools and its top-level limits, if any.
func entries(js []byte) ([]json.RawMessage, json.RawMessage, error) {
	js = bytes.TrimSpace(js)
	var list []json.RawMessage
	if len(js) > 0 && js[0] == '[' {
		if err := json.Unmarshal(js, &list); err != nil {
			return nil, nil, err
		}
		return list, nil, nil
	}
	var top struct {
		Tools  []json.RawMessage `json:"tools"`
		Limits json.RawMessage   `json:"limits"`
		Result *struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(js, &top); err != nil {
		return nil, nil, fmt.Errorf("expected a list of tools or an object with tools: %w", err)
	}
	if top.Result != nil {
		return top.Result.Tools, nil, nil
	}
	return top.Tools, top.Limits, nil
}

func entry(raw json.RawMessage) (Definition, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return Definition{}, fmt.Errorf("not an object: %w", err)
	}
	// OpenAI chat: {"type":"function","function":{name, description, parameters, strict}}
	if fn, ok := fields["function"]; ok {
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(fn, &inner); err != nil {
			return Definition{}, fmt.Errorf("function: not an object: %w", err)
		}
		delete(fields, "function")
		for k, v := range inner {
			fields[k] = v
		}
	}
	var d Definition
	_ = json.Unmarshal(fields["name"], &d.Name)
	var unknown []string
	for k := range fields {
		if !known(k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return d, fmt.Errorf("unknown field %q (known: name, description, input_schema|parameters|inputSchema, rules, placeholders, policy, executor, repair, atomic, sensitive_fields, cosmetic_repair, limits)", strings.Join(unknown, ", "))
	}
	var schemas []string
	for _, k := range []string{"input_schema", "parameters", "inputSchema"} {
		if v, ok := fields[k]; ok {
			schemas = append(schemas, k)
			fields["input_schema"] = v
		}
	}
	delete(fields, "parameters")
	delete(fields, "inputSchema")
	if len(schemas) > 1 {
		return d, fmt.Errorf("both %s given: keep one", strings.Join(schemas, " and "))
	}
	for _, k := range []string{"type", "strict", "title", "annotations", "outputSchema", "_meta", "cache_control"} {
		delete(fields, k)
	}
	norm, _ := json.Marshal(fields)
	dec := json.NewDecoder(bytes.NewReader(norm))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return d, fieldError(err, fields)
	}
	switch {
	case d.Name == "":
		return d, errors.New("name: required")
	case !nameRE.MatchString(d.Name):
		return d, fmt.Errorf("name: %q must be 1-64 letters, digits, '_' or '-' (as the providers require)", d.Name)
	case len(bytes.TrimSpace(d.InputSchema)) == 0 || string(bytes.TrimSpace(d.InputSchema)) == "null":
		return d, errors.New("input_schema: required (also accepted as parameters or inputSchema)")
	}
	switch d.Executor.Type {
	case "", "nats", "http":
	case "mcp":
		if err := mcpExecutor(d.Executor); err != nil {
			return d, err
		}
	default:
		return d, fmt.Errorf("executor.type: %q is not one of nats, http, mcp", d.Executor.Type)
	}
	if d.Executor.Type != "mcp" && (d.Executor.Command != "" || len(d.Executor.Args) > 0 || d.Executor.Tool != "" || d.Executor.StatusTool != "") {
		return d, errors.New("executor.command, executor.args, executor.tool, executor.status_tool: only for an mcp executor")
	}
	if d.Executor.Type == "http" && d.Executor.URL == "" {
		return d, errors.New("executor.url: required for an http executor")
	}
	if err := groupFields(d.Executor); err != nil {
		return d, err
	}
	if d.Executor.StatusURL != "" && d.Executor.Type != "http" {
		return d, errors.New("executor.status_url: only for an http executor (a NATS executor answers status queries on its own subject)")
	}
	return d, nil
}

// fieldError turns a decoder error into one naming the field. An unknown
// key inside a nested object (policy, executor, ...) is named with its
// parent: "policy: unknown field \"approve\"".
func fieldError(err error, fields map[string]json.RawMessage) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%s: expected %s, got %s", te.Field, te.Type, te.Value)
	}
	msg, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return err
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		one, _ := json.Marshal(map[string]json.RawMessage{k: fields[k]})
		dec := json.NewDecoder(bytes.NewReader(one))
		dec.DisallowUnknownFields()
		var d Definition
		if derr := dec.Decode(&d); derr != nil && derr.Error() == err.Error() {
			return fmt.Errorf("%s: unknown field %s", k, msg)
		}
	}
	return fmt.Errorf("unknown field %s", msg)
}
