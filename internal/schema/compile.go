// Package schema compiles and checks tool input schemas (JSON Schema draft-07 and
// 2020-12) for the validate gate. It never fetches anything over the network or from
// disk: a schema may only refer to itself, to the built-in meta-schemas, or to
// resources handed to Compile with WithResources.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrExternalRef is wrapped by the Compile error of a schema whose $ref points outside
// the schema and outside the preloaded resources.
var ErrExternalRef = errors.New("schema: external $ref is not fetched")

// Draft names a JSON Schema dialect for schemas without "$schema".
type Draft string

// Drafts accepted by WithDefaultDraft.
const (
	Draft7    Draft = "draft-07"
	Draft2020 Draft = "2020-12"
)

// Schema is one compiled tool input schema. It is safe for concurrent use.
type Schema struct {
	name string
	sch  *jsonschema.Schema
}

// Name returns the tool name the schema was compiled for.
func (s *Schema) Name() string { return s.name }

type config struct {
	draft        *jsonschema.Draft
	assertFormat bool
	resources    map[string]any
}

// Option changes how Compile compiles a schema.
type Option func(*config) error

// WithDefaultDraft sets the dialect of a schema that has no "$schema" keyword. The
// default is 2020-12, as MCP specifies.
func WithDefaultDraft(d Draft) Option {
	return func(c *config) error {
		switch d {
		case Draft7:
			c.draft = jsonschema.Draft7
		case Draft2020:
			c.draft = jsonschema.Draft2020
		default:
			return fmt.Errorf("schema: unknown draft %q: use %q or %q", d, Draft7, Draft2020)
		}
		return nil
	}
}

// WithoutFormatAssertion treats "format" as an annotation, as the required part of the
// JSON-Schema-Test-Suite does. By default Compile asserts formats (date, date-time,
// email, uuid, uri, ...), because a tool argument "date": "soon" must fail.
func WithoutFormatAssertion() Option {
	return func(c *config) error {
		c.assertFormat = false
		return nil
	}
}

// WithResources preloads documents by absolute URL, so that a $ref to one of them
// resolves in memory. Nothing is ever fetched: a $ref to any other URL fails Compile.
func WithResources(docs map[string]any) Option {
	return func(c *config) error {
		for u, doc := range docs {
			if _, err := url.Parse(u); err != nil {
				return fmt.Errorf("schema: resource %q: %w", u, err)
			}
			c.resources[u] = doc
		}
		return nil
	}
}

// noFetch is the compiler's loader: it serves nothing, so every reference the compiler
// cannot resolve in memory becomes an error naming the URL.
type noFetch struct{}

func (noFetch) Load(u string) (any, error) {
	return nil, ErrExternalRef
}

// Compile compiles the input schema raw of tool name. A schema without "$schema" is
// read as draft 2020-12 (see WithDefaultDraft); "$schema" of draft-07 is honoured.
// Formats are asserted unless WithoutFormatAssertion is given. A $ref that leaves the
// schema fails with an error wrapping ErrExternalRef.
func Compile(name string, raw json.RawMessage, opts ...Option) (*Schema, error) {
	cfg := config{draft: jsonschema.Draft2020, assertFormat: true, resources: map[string]any{}}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("schema: tool %s: input schema is empty: give a JSON Schema object such as {\"type\":\"object\"}", name)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema: tool %s: input schema is not JSON: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(cfg.draft)
	if cfg.assertFormat {
		c.AssertFormat()
	}
	c.UseLoader(noFetch{})
	for u, d := range cfg.resources {
		if err := c.AddResource(u, d); err != nil {
			return nil, fmt.Errorf("schema: resource %s: %w", u, err)
		}
	}
	loc := "toolgate:///tools/" + url.PathEscape(name) + ".json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("schema: tool %s: %w", name, err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, newCompileError(name, loc, err)
	}
	return &Schema{name: name, sch: sch}, nil
}

// compileError is a compile failure with the library's message, in which the internal
// resource URL is replaced by "input_schema". It unwraps to ErrExternalRef when a $ref
// could not be resolved in memory, else to the library's error.
type compileError struct {
	msg string
	err error
}

func (e *compileError) Error() string { return e.msg }
func (e *compileError) Unwrap() error { return e.err }

func newCompileError(name, loc string, err error) error {
	msg := strings.ReplaceAll(err.Error(), loc, "input_schema")
	var lerr *jsonschema.LoadURLError
	if errors.As(err, &lerr) && errors.Is(lerr.Err, ErrExternalRef) {
		return &compileError{msg: fmt.Sprintf("schema: tool %s: input schema refers to %s, which is not fetched: inline it under $defs and refer to it as #/$defs/NAME", name, lerr.URL), err: ErrExternalRef}
	}
	var serr *jsonschema.SchemaValidationError
	var verr *jsonschema.ValidationError
	if errors.As(err, &serr) && errors.As(serr.Err, &verr) {
		// The schema breaks its meta-schema: list each broken keyword by its place in
		// the schema, as Validate lists a document's problems.
		var ps []Problem
		collect(verr, &ps)
		parts := make([]string, len(ps))
		for i, p := range ps {
			parts[i] = "input_schema" + p.Path + ": " + p.Message
		}
		msg = strings.Join(parts, "; ")
	}
	return &compileError{msg: fmt.Sprintf("schema: tool %s: input schema does not compile: %s", name, msg), err: err}
}
