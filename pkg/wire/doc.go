// Package wire is toolgate's public contract: the subjects and headers a
// producer and an executor use, the call statuses and their state machine,
// and the JSON of what toolgate publishes back (results, response results,
// executor replies). It imports only the standard library, so a client links
// nothing of toolgate's gates.
package wire
