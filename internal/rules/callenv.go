package rules

import "cel.dev/cel-go/cel"

// NewCallEnv returns the environment of the expressions that decide about a
// call as a whole — a policy's allow, a limit's key and weight: NewEnv with
// principal, roles, tenant, tool and args. One declaration, so that an
// expression valid in one is valid in the other.
func NewCallEnv() (*cel.Env, error) {
	return NewEnv(
		cel.Variable("principal", cel.StringType),
		cel.Variable("roles", cel.ListType(cel.StringType)),
		cel.Variable("tenant", cel.StringType),
		cel.Variable("tool", cel.StringType),
		cel.Variable("args", cel.MapType(cel.StringType, cel.DynType)),
	)
}

// CallVars are NewCallEnv's variables for one call; nil roles and args
// are bound as empty (CEL has no nil list or map), args normalized.
func CallVars(tenant, principal, tool string, roles []string, args map[string]any) map[string]any {
	if roles == nil {
		roles = []string{}
	}
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"principal": principal, "roles": roles, "tenant": tenant, "tool": tool, "args": Normalize(args)}
}
