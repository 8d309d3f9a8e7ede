package rules

import (
	"fmt"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
)

// Rule actions.
const (
	// ActionReject ends the call as business_invalid (the default).
	ActionReject = "reject"
	// ActionReview routes the call to manual review.
	ActionReview = "review"
)

// Rule is one business rule of a tool: Expr is a CEL condition over args and ctx that
// is true when the call is fine; Message says what is wrong when it is false.
type Rule struct {
	Expr    string `json:"expr"`
	Message string `json:"message"`
	// Action is "reject" (default) or "review" (route to manual review).
	Action string `json:"action,omitempty"`
}

// Context is the request context a rule may read as ctx.tenant, ctx.principal,
// ctx.roles and ctx.conversation.
type Context struct {
	Tenant, Principal, Conversation string
	Roles                           []string
}

// ctxFields are the fields of ctx; a rule naming another one does not compile.
func ctxFields() []string { return []string{"conversation", "principal", "roles", "tenant"} }

// Violation is one rule that did not hold, or one placeholder the detector found.
type Violation struct {
	// Rule is the index of the rule in the tool's list, -1 for the placeholder detector.
	Rule int `json:"rule"`
	// Field is the dotted path of the argument concerned (line_items.0.quantity), ""
	// when the rule is about the call as a whole.
	Field string `json:"field,omitempty"`
	// Message says what is wrong or missing.
	Message string `json:"message"`
	// Action is ActionReject or ActionReview.
	Action string `json:"action"`
}

type compiled struct {
	rule   Rule
	prg    cel.Program
	fields [][]string
}

// Set is the compiled rules of one tool. It is safe for concurrent use.
type Set struct {
	rules []compiled
}

// Compiler compiles rule sets in one CEL environment, built once by
// NewCompiler (building it costs far more than compiling a rule). It is safe
// for concurrent use.
type Compiler struct {
	env *cel.Env
}

// NewCompiler builds the environment rules are compiled in: args and ctx,
// both maps.
func NewCompiler() (*Compiler, error) {
	env, err := NewEnv(
		cel.Variable("args", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("ctx", cel.MapType(cel.StringType, cel.DynType)),
	)
	if err != nil {
		return nil, err
	}
	return &Compiler{env: env}, nil
}

// Compile is NewCompiler followed by its Compile, for a one-off set; code
// that compiles many sets keeps one Compiler.
func Compile(rules []Rule) (*Set, error) {
	c, err := NewCompiler()
	if err != nil {
		return nil, err
	}
	return c.Compile(rules)
}

// Compile compiles the rules of one tool. Expressions see args (the call's arguments,
// a map) and ctx (tenant, principal, roles, conversation) and must evaluate to bool.
// An error names the rule by index: "rules: rule 2: undeclared reference to 'arg'
// (did you mean 'args'?) at column 1".
func (c *Compiler) Compile(rules []Rule) (*Set, error) {
	s := &Set{rules: make([]compiled, 0, len(rules))}
	for i, r := range rules {
		switch r.Action {
		case "":
			r.Action = ActionReject
		case ActionReject, ActionReview:
		default:
			return nil, fmt.Errorf("rules: rule %d: action %q is unknown: use %q or %q", i, r.Action, ActionReject, ActionReview)
		}
		if strings.TrimSpace(r.Message) == "" {
			return nil, fmt.Errorf("rules: rule %d: message is empty: say what is wrong when %q is false", i, r.Expr)
		}
		a, prg, err := CompileExpr(c.env, r.Expr)
		if err != nil {
			return nil, fmt.Errorf("rules: rule %d: %w", i, err)
		}
		root := a.NativeRep().Expr()
		if err := checkCtxFields(root); err != nil {
			return nil, fmt.Errorf("rules: rule %d: %w", i, err)
		}
		s.rules = append(s.rules, compiled{rule: r, prg: prg, fields: fieldPaths(root, "args")})
	}
	return s, nil
}

// checkCtxFields refuses ctx.<name> for a name ctx does not have, which CEL's checker
// cannot see because ctx is a map.
func checkCtxFields(e ast.Expr) error {
	fields := ctxFields()
	for _, p := range fieldPaths(e, "ctx") {
		if len(p) == 0 || slices.Contains(fields, p[0]) {
			continue
		}
		hint := ""
		if s := suggest(p[0], fields); s != "" {
			hint = fmt.Sprintf(" (did you mean 'ctx.%s'?)", s)
		}
		return fmt.Errorf("ctx has no field '%s'%s: ctx has %s", p[0], hint, strings.Join(fields, ", "))
	}
	return nil
}

// Len returns the number of rules in the set.
func (s *Set) Len() int { return len(s.rules) }

// Eval runs every rule against args (decoded JSON; see Normalize, which Eval applies)
// and returns a violation for each rule that is false, in rule order. A rule that cannot
// be evaluated because a field it reads is missing yields a violation naming that field
// ("date is missing (needed to check: ...)"); any other evaluation error yields a
// violation saying the rule could not be checked. Eval never panics on any args.
func (s *Set) Eval(args map[string]any, ctx Context) []Violation {
	if len(s.rules) == 0 {
		return nil
	}
	roles := ctx.Roles
	if roles == nil {
		roles = []string{}
	}
	if args == nil {
		args = map[string]any{}
	}
	vars := map[string]any{
		"args": Normalize(args),
		"ctx": map[string]any{
			"tenant": ctx.Tenant, "principal": ctx.Principal,
			"conversation": ctx.Conversation, "roles": roles,
		},
	}
	var out []Violation
	for i, r := range s.rules {
		if v, bad := r.eval(i, vars); bad {
			out = append(out, v)
		}
	}
	return out
}

func (r compiled) eval(i int, vars map[string]any) (v Violation, bad bool) {
	defer func() {
		if p := recover(); p != nil {
			v, bad = Violation{Rule: i, Message: fmt.Sprintf("rule %d could not be checked (%v): %s", i, p, r.rule.Message), Action: ActionReject}, true
		}
	}()
	out, _, err := r.prg.Eval(vars)
	if err == nil {
		if b, ok := out.(types.Bool); ok {
			if b {
				return Violation{}, false
			}
			return Violation{Rule: i, Message: r.rule.Message, Action: r.rule.Action}, true
		}
		err = fmt.Errorf("the rule returned %s, not true or false", out.Type())
	}
	args, _ := vars["args"].(map[string]any)
	if missing := missingFields(args, r.fields); len(missing) > 0 {
		verb := "is"
		if len(missing) > 1 {
			verb = "are"
		}
		return Violation{Rule: i, Field: missing[0], Action: ActionReject,
			Message: fmt.Sprintf("%s %s missing (needed to check: %s)", strings.Join(missing, ", "), verb, r.rule.Message)}, true
	}
	if key, ok := strings.CutPrefix(err.Error(), "no such key: "); ok {
		return Violation{Rule: i, Field: key, Action: ActionReject,
			Message: fmt.Sprintf("%s is missing (needed to check: %s)", key, r.rule.Message)}, true
	}
	return Violation{Rule: i, Action: ActionReject,
		Message: fmt.Sprintf("rule %d could not be checked (%v): %s", i, err, r.rule.Message)}, true
}
