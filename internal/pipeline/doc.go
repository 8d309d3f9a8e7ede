// Package pipeline joins the gates: an Emitter turns the envelopes a gate
// returns into the messages the worker publishes (the next stage's input,
// the terminal result, the dead letter, the status record, the batch
// marks), cut to fit its connection's max payload, and adapts an envelope
// gate to the worker's handler. The Emitter is handed to the gates of one
// pipeline (stage.Deps.Emit); nothing here is process-wide.
package pipeline
