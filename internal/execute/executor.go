// Package execute runs approved calls through their executors. An executor
// tells apart "did not run" (safe to retry) from "may have run" (the outcome
// is unknown and must be reconciled, never retried blindly).
package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Reply is the executor's answer, wire.ExecReply: {"ok": true, "result": ...}
// or {"ok": false, "error": "..."}.
type Reply = wire.ExecReply

// Request is one execution.
type Request struct {
	Tool           string
	CallID         string
	IdempotencyKey string
	Arguments      json.RawMessage
	// ReplayPartition is the partition of the executors' replay bucket
	// where a NATS executor (pkg/toolserver) records the request: sent as
	// header Toolgate-Replay-Partition and signed when > 0 (the call's
	// partition, with P > 1). HTTP and MCP executors ignore it.
	ReplayPartition int
}

// Executor runs one call.
type Executor interface {
	Execute(ctx context.Context, req Request) (Reply, error)
}

// Errors an executor returns.
var (
	// ErrNotRun: the request never reached the tool (no responder,
	// connection refused): releasing the claim and retrying is safe.
	ErrNotRun = errors.New("execute: the tool did not receive the call")
	// ErrUnknown: the request may have reached the tool (a timeout after
	// sending, a broken connection mid-request).
	ErrUnknown = errors.New("execute: the outcome is unknown")
	// ErrRefused: the tool refused the request's signature
	// (wire.HeaderSignatureRefused) and did not run it. It comes wrapped in
	// ErrNotRun, and in ErrCannotRun unless the reason is
	// wire.RefusedStale (a request that waited too long; a fresh signature
	// may pass).
	ErrRefused = errors.New("execute: the tool refused the request's signature")
	// ErrCannotRun: the call was not run and no retry can change that
	// (a destination the execute stage may not reach, a signature the tool
	// refuses, an executor type it does not know): the call ends at once,
	// with one dead letter, for a replay after the cause is fixed. It comes
	// wrapped in ErrNotRun.
	ErrCannotRun = errors.New("execute: the call cannot run as configured")
)

// DefaultMaxResult is the most bytes of an executor's answer kept whole in
// the results (the rest is cut to its size, sha256 and an excerpt): 256 KiB,
// well below NATS' default 1 MiB max payload. The execute stage's
// --exec-max-result changes it; it never exceeds what the connection's max
// payload can carry (result.Limit).
const DefaultMaxResult = 256 << 10

// refused is the ErrNotRun of a tool that refused the signature; only a
// stale one may pass when signed anew.
func refused(where, reason, answer string) error {
	if reason != wire.RefusedStale {
		return fmt.Errorf("%w: %w: %w", ErrNotRun, ErrCannotRun, refusal(where, reason, answer))
	}
	return fmt.Errorf("%w: %w", ErrNotRun, refusal(where, reason, answer))
}

func refusal(where, reason, answer string) error {
	return fmt.Errorf("%w (%s): %s: %s; it did not run. Give the tool the execute stage's public key "+
		"(exec-signing.pub in toolgate up's secrets directory, TOOLGATE_EXEC_PUBLIC_KEY for pkg/toolserver) "+
		"or give the execute stage the key the tool trusts (--exec-signing-key), and check both clocks",
		ErrRefused, reason, where, answer)
}

// CannotRun reports whether err says the call was not run and no retry can
// change that: ErrCannotRun, or a destination the execute stage may not
// reach (ErrDestination).
func CannotRun(err error) bool {
	return errors.Is(err, ErrNotRun) && (errors.Is(err, ErrCannotRun) || errors.Is(err, ErrDestination))
}

// Why is what an error of an executor says past ErrNotRun's own words:
// "no executor listens on toolgate.exec.x" rather than "execute: the tool
// did not receive the call: no executor listens on toolgate.exec.x".
func Why(err error) string {
	s := err.Error()
	if i := strings.Index(s, ErrNotRun.Error()+": "); i >= 0 {
		return s[i+len(ErrNotRun.Error())+2:]
	}
	return s
}
