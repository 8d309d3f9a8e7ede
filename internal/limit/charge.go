package limit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"cel.dev/cel-go/common/types"

	"github.com/toolgate/toolgate/internal/rules"
)

// Input is what a key and a weight are computed from.
type Input struct {
	Tenant, Principal, Tool string
	Roles                   []string
	Args                    map[string]any
}

// Charge is what one call uses of one limit: the store checks it against
// the limit's usage and records it with the call's claim.
type Charge struct {
	Limit   string        `json:"limit"`
	Key     string        `json:"key"` // bounded: KeyOf
	Weight  int64         `json:"weight"`
	Window  time.Duration `json:"-"`
	Max     int64         `json:"-"`
	MaxKeys int           `json:"-"`
	// Used is set by a claim that charged: the key's usage with this
	// charge, for the fill metric.
	Used int64 `json:"-"`
}

// KeyOf bounds a key: one longer than MaxKeyLen bytes is kept as "sha256:"
// and its hash, so an argument chosen by a model never makes a large store
// key. Keys are never metric labels.
func KeyOf(k string) string {
	if len(k) <= MaxKeyLen {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Charge computes the call's charge. An error (the key or weight cannot be
// evaluated, a negative weight) means the call cannot be metered: the gate
// refuses it rather than run it unmetered.
func (c *Compiled) Charge(in Input) (ch Charge, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("limit %s could not be evaluated: %v", c.Def.Name, p)
		}
	}()
	ch = Charge{Limit: c.Def.Name, Key: in.Tenant, Weight: 1, Window: c.Window, Max: c.Max, MaxKeys: c.MaxKeys}
	if c.key == nil && c.weight == nil {
		ch.Key = KeyOf(ch.Key)
		return ch, nil
	}
	vars := rules.CallVars(in.Tenant, in.Principal, in.Tool, in.Roles, in.Args)
	if c.key != nil {
		out, _, err := c.key.Eval(vars)
		if err != nil {
			return Charge{}, fmt.Errorf("limit %s: key: %w", c.Def.Name, err)
		}
		s, ok := out.(types.String)
		if !ok {
			return Charge{}, fmt.Errorf("limit %s: key gave %s, not a string", c.Def.Name, out.Type())
		}
		ch.Key = string(s)
	}
	ch.Key = KeyOf(ch.Key)
	if c.weight != nil {
		out, _, err := c.weight.Eval(vars)
		if err != nil {
			return Charge{}, fmt.Errorf("limit %s: weight: %w", c.Def.Name, err)
		}
		n, ok := out.(types.Int)
		if !ok {
			return Charge{}, fmt.Errorf("limit %s: weight gave %s, not an integer", c.Def.Name, out.Type())
		}
		if n < 0 {
			return Charge{}, fmt.Errorf("limit %s: weight %d is negative", c.Def.Name, int64(n))
		}
		ch.Weight = int64(n)
	}
	return ch, nil
}
