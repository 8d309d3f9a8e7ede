// Package publish is what a producer runs: `toolgate publish` (a response
// or a transcript, and waiting for its outcomes), and the commands that
// follow a call from there: results, status (one call's story, or the
// executor groups' overview) and calls ls.
package publish
