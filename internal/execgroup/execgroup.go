// Package execgroup says what may name an executor group and how many calls
// of a group may run at once: the tool definitions (internal/tool) check
// them, and the execute stage's subjects and durables (streams) are built
// from them. It is pure, so the definitions link no NATS.
package execgroup

import "regexp"

// DefaultConcurrency is a group's handler goroutines (and its durable's
// MaxAckPending) when its definition sets none.
const DefaultConcurrency = 8

// MaxAttempts bounds a group's retry attempts and backoff steps.
const MaxAttempts = 100

// MaxConcurrency bounds what a definition may ask for.
const MaxConcurrency = 256

// What a call does while its group's circuit is open (a definition's
// executor.circuit_open): wait in the group's queue, or fail at once.
const (
	CircuitWait = "wait"
	CircuitFail = "fail"
)

// ErrCircuitOpen begins the error of a call failed because its group's
// circuit was open.
const ErrCircuitOpen = "circuit_open"

var groupRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Valid reports whether g may name an executor group: it is a subject
// token and part of a durable name.
func Valid(g string) bool { return groupRE.MatchString(g) }
