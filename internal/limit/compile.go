package limit

import (
	"fmt"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"

	"github.com/toolgate/toolgate/internal/rules"
)

// Compiled is a limit ready for the execute gate.
type Compiled struct {
	Def     Limit
	Window  time.Duration
	Max     int64 // Count, or Max for a weight limit
	Wait    bool
	MaxWait time.Duration
	MaxKeys int
	key     cel.Program // nil: tenant
	weight  cel.Program // nil: every call weighs 1
}

// Compiler compiles limits in one CEL environment (tenant, principal, roles,
// tool, args: the policy's, rules.NewCallEnv). It is safe for concurrent use.
type Compiler struct{ env *cel.Env }

// NewCompiler builds the environment.
func NewCompiler() (*Compiler, error) {
	env, err := rules.NewCallEnv()
	if err != nil {
		return nil, fmt.Errorf("limit: %w", err)
	}
	return &Compiler{env: env}, nil
}

// Compile checks l. An error starts with the field it is about ("key: ...",
// "window: ...") and carries no prefix: the caller says which limit.
func (c *Compiler) Compile(l Limit) (*Compiled, error) {
	if !nameRE.MatchString(l.Name) {
		return nil, fmt.Errorf("name: %q must be 1-64 letters, digits, '_' or '-'", l.Name)
	}
	out := &Compiled{Def: l, MaxKeys: l.MaxKeys}
	var err error
	if out.Window, err = time.ParseDuration(l.Window); err != nil || out.Window < time.Second || out.Window > MaxWindow {
		return nil, fmt.Errorf("window: %q is not a duration from 1s to %s, such as 1h", l.Window, MaxWindow)
	}
	switch {
	case l.Count > 0 && (l.Weight != "" || l.Max != 0):
		return nil, fmt.Errorf("count: give either count, or weight with max, not both")
	case l.Count > 0:
		out.Max = l.Count
	case l.Count < 0:
		return nil, fmt.Errorf("count: %d is not a positive number of calls", l.Count)
	case strings.TrimSpace(l.Weight) == "":
		return nil, fmt.Errorf("count: required (or weight with max)")
	case l.Max <= 0:
		return nil, fmt.Errorf("max: required with weight: a positive sum of weights per window, got %d", l.Max)
	default:
		out.Max = l.Max
		if out.weight, err = c.program(l.Weight, types.IntType); err != nil {
			return nil, fmt.Errorf("weight: %w", err)
		}
	}
	if strings.TrimSpace(l.Key) != "" {
		if out.key, err = c.program(l.Key, types.StringType); err != nil {
			return nil, fmt.Errorf("key: %w", err)
		}
	}
	if out.Max > MaxMax {
		return nil, fmt.Errorf("max: %d is over %d", out.Max, int64(MaxMax))
	}
	switch l.OnExceed {
	case "", Reject:
		if l.MaxWait != "" {
			return nil, fmt.Errorf("max_wait: only with on_exceed: wait")
		}
	case Wait:
		out.Wait = true
		if out.MaxWait, err = time.ParseDuration(l.MaxWait); err != nil || out.MaxWait <= 0 || out.MaxWait > MaxMaxWait {
			return nil, fmt.Errorf("max_wait: %q is not a duration up to %s, such as 30s (required with on_exceed: wait)", l.MaxWait, MaxMaxWait)
		}
	default:
		return nil, fmt.Errorf("on_exceed: %q is not reject or wait", l.OnExceed)
	}
	switch {
	case l.MaxKeys == 0:
		out.MaxKeys = DefaultMaxKeys
	case l.MaxKeys < 1 || l.MaxKeys > MaxMaxKeys:
		return nil, fmt.Errorf("max_keys: %d is outside 1..%d", l.MaxKeys, MaxMaxKeys)
	}
	return out, nil
}

// program compiles expr, which must give want (or dyn, checked when it runs).
func (c *Compiler) program(expr string, want *types.Type) (cel.Program, error) {
	ast, iss := c.env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("%s", strings.ReplaceAll(iss.Err().Error(), "\n", " "))
	}
	if t := ast.OutputType(); !t.IsExactType(want) && !t.IsExactType(types.DynType) {
		return nil, fmt.Errorf("expression evaluates to %s, not %s", t, want)
	}
	prg, err := c.env.Program(ast, cel.CostLimit(rules.CostLimit), cel.MemoryLimit(rules.MemoryLimit))
	if err != nil {
		return nil, fmt.Errorf("expression does not compile: %w", err)
	}
	return prg, nil
}
