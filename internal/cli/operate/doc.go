// Package operate is what an operator runs on calls that need a person:
// approvals, approve and deny (a waiting call, with its arguments' hash),
// and dlq (ls, show, replay and purge dead letters).
package operate
