// Package natsmap writes a toolgate NATS server's account subject mapping
// of the claimed subjects and of TOOLGATE_IN's partitioned subjects
// (issue 37, wire.Mappings) as configuration
// text: the server, not the producer, picks a claimed response's
// partition. The nats-server processes of chaos and bench, `toolgate authz
// render` (deploy/) use it; the Helm chart writes the same block from its
// partitions value; an embedded server (`toolgate up`, tests) takes it by
// natsmap/embedded.Apply.
package natsmap

import (
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Conf is the mappings of P = p (wire.Mappings: the claimed subjects',
// and TOOLGATE_IN's streams' and batch subjects') as a nats-server
// configuration block, at the top level (the global account's); "" for
// p <= 1.
func Conf(p int) string {
	ms := wire.Mappings(p)
	if len(ms) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("mappings {\n")
	for _, m := range ms {
		b.WriteString("  " + strconv.Quote(m.Src) + ": " + strconv.Quote(m.Dest) + "\n")
	}
	b.WriteString("}\n")
	return b.String()
}
