// Package deploy is what a deployment is prepared with: `toolgate authz
// render` (the NATS users), `toolgate secrets init`, `toolgate streams
// apply` and `toolgate probe` (the container healthcheck).
package deploy
