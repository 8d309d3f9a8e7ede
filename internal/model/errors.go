package model

import (
	"errors"
	"fmt"
	"time"
)

// Errors that Complete wraps, for errors.Is.
var (
	// ErrTimeout: one request took longer than Config.Timeout. Retried
	// within the bound; wrapped in the final error when the bound is hit.
	ErrTimeout = errors.New("model: request timed out")
	// ErrExhausted: every allowed request failed with a retryable error. The
	// last failure is wrapped too (an *HTTPError, ErrTimeout or a network
	// error), and Retryable reports true, so a caller may try again later.
	ErrExhausted = errors.New("model: retries exhausted")
)

// HTTPError is a non-2xx answer from the model endpoint.
type HTTPError struct {
	Protocol Protocol
	Status   int
	// Body is the start of the response body (at most 512 bytes) with the
	// API key, if the server echoed it, replaced by "[redacted]".
	Body string
	// StatusText is the status's name (net/http's StatusText), filled by
	// the client; this package links no HTTP code.
	StatusText string
	// RetryAfter is the server's Retry-After, zero when absent;
	// HasRetryAfter says whether the server sent one.
	RetryAfter    time.Duration
	HasRetryAfter bool
}

// Error says which protocol answered what.
func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("model: %s: HTTP %d %s", e.Protocol, e.Status, e.StatusText)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Retryable reports whether the status may succeed on a later request:
// 408, 429 and every 5xx. Other 4xx (bad request, bad key, unknown model)
// are permanent.
func (e *HTTPError) Retryable() bool {
	return e.Status == 408 || e.Status == 429 || e.Status >= 500 // Request Timeout, Too Many Requests, 5xx
}

// Retryable reports whether err, as returned by Complete, is worth trying
// again later (for example by redelivering the message with a delay): true
// for exhausted retries, timeouts, network errors and retryable statuses;
// false for permanent HTTP errors, invalid configuration and a cancelled
// context.
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Retryable()
	}
	if errors.Is(err, ErrExhausted) || errors.Is(err, ErrTimeout) {
		return true
	}
	var te *TransportError
	return errors.As(err, &te)
}

// TransportError marks a transport failure (connection refused, reset,
// DNS) so it is told apart from permanent failures.
type TransportError struct{ Err error }

func (e *TransportError) Error() string { return "model: transport: " + e.Err.Error() }
func (e *TransportError) Unwrap() error { return e.Err }
