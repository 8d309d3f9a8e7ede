package stage

import "github.com/nats-io/nats.go"

// notifier is the Emitter's Notify: a plain NATS publish on nc, as
// accumulate's stream progress is, of a notice this process's user may
// publish (a deployment whose NATS users predate the grant gets none, not
// a permissions violation per waiting call).
func notifier(nc *nats.Conn, may mayFunc) func(subject string, data []byte) {
	return func(subject string, data []byte) {
		if may(subject) {
			_ = nc.Publish(subject, data) // display only: a lost one costs nothing
		}
	}
}
