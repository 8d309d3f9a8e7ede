// Package execute runs approved calls through their executors. An executor
// tells apart "did not run" (safe to retry) from "may have run" (the outcome
// is unknown and must be reconciled, never retried blindly).
package execute

import (
	"context"
	"encoding/json"
	"errors"

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
)
