// Package natsproc runs nats-server as child processes: one server
// (`toolgate bench --nats embedded-process`) or three clustered by routes
// (`toolgate chaos --topology cluster`, `toolgate bench --nats cluster`),
// each on free ports with JetStream on file storage and a monitoring port
// of its own, of the version the project embeds.
package natsproc
