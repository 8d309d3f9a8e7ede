package tool

import (
	"regexp"
	"strings"
)

// compileFieldError is a compile error of one field of a definition, written once:
// the field, then the underlying package's message without its own prefix.
// It unwraps to the underlying error, so errors.Is still sees, for example,
// schema.ErrExternalRef.
type compileFieldError struct {
	msg string
	err error
}

func (e *compileFieldError) Error() string { return e.msg }
func (e *compileFieldError) Unwrap() error { return e.err }

// schemaError rewrites "schema: tool X: input schema does not compile: ..."
// as "input_schema does not compile: ...".
func schemaError(name string, err error) error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "schema: tool "+name+": input schema "); ok {
		return &compileFieldError{msg: "input_schema " + rest, err: err}
	}
	msg = strings.TrimPrefix(msg, "schema: tool "+name+": ")
	return &compileFieldError{msg: "input_schema: " + strings.TrimPrefix(msg, "schema: "), err: err}
}

var ruleRE = regexp.MustCompile(`^rules: rule (\d+): `)

// rulesError rewrites "rules: rule 2: ..." as "rules[2]: ...", the field's
// place in the definition.
func rulesError(err error) error {
	msg := err.Error()
	if m := ruleRE.FindStringSubmatch(msg); m != nil {
		return &compileFieldError{msg: "rules[" + m[1] + "]: " + msg[len(m[0]):], err: err}
	}
	return &compileFieldError{msg: "rules: " + strings.TrimPrefix(msg, "rules: "), err: err}
}

// policyError rewrites "policy: allow: ..." as "policy.allow: ..." and keeps
// "policy: risk ..." as it is.
func policyError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "policy: ")
	if rest, ok := strings.CutPrefix(msg, "allow: "); ok {
		return &compileFieldError{msg: "policy.allow: " + rest, err: err}
	}
	return &compileFieldError{msg: "policy: " + msg, err: err}
}
