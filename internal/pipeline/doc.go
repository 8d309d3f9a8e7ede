// Package pipeline joins the gates: it turns the envelopes a gate returns
// into the messages the worker publishes (the next stage's input, the
// terminal result, the dead letter, the status record), and adapts an
// envelope gate to the worker's handler.
package pipeline
