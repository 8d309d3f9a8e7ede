// Package natsmap writes a toolgate NATS server's account subject mapping
// of the claimed subjects (issue 37, wire.ClaimedMapping) as configuration
// text: the server, not the producer, picks a claimed response's
// partition. The nats-server processes of chaos and bench, `toolgate authz
// render` (deploy/) use it; the Helm chart writes the same block from its
// partitions value; an embedded server (`toolgate up`, tests) takes it by
// natsmap/embedded.Apply.
package natsmap

import (
	"strconv"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Conf is the mapping of P = p as a nats-server configuration block, at
// the top level (the global account's); "" for p <= 1.
func Conf(p int) string {
	src, dest := wire.ClaimedMapping(p)
	if src == "" {
		return ""
	}
	return "mappings {\n  " + strconv.Quote(src) + ": " + strconv.Quote(dest) + "\n}\n"
}
