// Package limit defines rate limits, quotas and budgets on tool executions:
// how many calls (count) or how much of an argument (weight) one key may use
// in a sliding window. It is a pure core: the definitions, their CEL key and
// weight expressions, and the charges a call makes. The idempotency store
// (internal/idem) checks and records the charges atomically with a call's
// execution claim, so only a call that really runs is charged, once.
package limit

import (
	"regexp"
	"time"
)

// Limit is one limit as written in a tools file: top-level under limits:
// (Tools names the tools it covers; none: every tool of the file) or inside
// a tool's definition (that tool). Calls of every tool a limit covers share
// its usage: the name is the counter.
type Limit struct {
	Name  string   `json:"name"`
	Tools []string `json:"tools,omitempty"`
	// Key is a CEL expression over tenant, principal, roles, tool and args
	// giving the string usage is counted under; default tenant.
	Key    string `json:"key,omitempty"`
	Window string `json:"window"` // Go duration: the sliding window
	// Count: at most Count calls per key per window. Or Weight (a CEL
	// expression giving a non-negative integer) with Max: at most Max of
	// weight summed per key per window.
	Count  int64  `json:"count,omitempty"`
	Weight string `json:"weight,omitempty"`
	Max    int64  `json:"max,omitempty"`
	// OnExceed: reject (default) ends the call limit_exceeded; wait holds it
	// until the window allows, up to MaxWait, then rejects.
	OnExceed string `json:"on_exceed,omitempty"`
	MaxWait  string `json:"max_wait,omitempty"`
	// MaxKeys bounds how many keys the limit tracks one by one (default
	// DefaultMaxKeys): past it the least recently used key's usage is moved
	// to one shared overflow that every key of the limit is also charged
	// against, so eviction only ever makes the limit stricter.
	MaxKeys int `json:"max_keys,omitempty"`
}

// Values of OnExceed.
const (
	Reject = "reject"
	Wait   = "wait"
)

// Bounds of a definition.
const (
	DefaultMaxKeys = 10_000
	MaxMaxKeys     = 1_000_000
	MaxWindow      = 31 * 24 * time.Hour
	MaxMaxWait     = time.Hour
	// MaxKeyLen is the longest key kept as written; a longer one is kept as
	// its hash (KeyOf), so hostile arguments cannot make store keys large.
	MaxKeyLen = 128
	// MaxMax bounds count and max: sums stay exact in the store's numbers
	// (Lua's are doubles).
	MaxMax = 1 << 50
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidName reports whether s may name a limit (what a limit message's
// name is read back by: the console's story of a call).
func ValidName(s string) bool { return nameRE.MatchString(s) }
