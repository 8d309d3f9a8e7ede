// Package batch coordinates atomic batches: the marks every stage writes
// (Marks), the records kept in the toolgate_batches bucket and their checks
// (KV, record.go), and the one decision per batch.
//
// Atomic batches. The calls of one response are atomic when the producer
// sent Toolgate-Atomic: true (call.Batch.Atomic) or any tool among them is
// defined with atomic: true. Then none executes unless every call of the
// response passed every gate:
//
//   - every call that reaches execute records "passed" in the batches
//     bucket and waits; a call that ends with a failure anywhere has
//     "failed" recorded by pipeline.Emitter.Outputs (Marks);
//   - the first waiting call that sees every call passed creates the
//     batch's one decision "run"; the first that sees a failure, or that
//     the batch's first arrival is older than the execute gate's BatchTimeout, creates
//     "abort" naming the failed call. The decision is created with
//     compare-and-set, so every call follows the same one;
//   - a call waits in the handler up to BatchWait, then is redelivered
//     (a transient nak) and waits again, until the decision exists.
//
// Atomic is about the gates, not a distributed transaction: once the batch
// decided to run, each call executes on its own and may still fail.
//
// Error texts keep their "gates:" prefix: an abort reason names them, and a
// result's text stays as it was before the package moved.
package batch
