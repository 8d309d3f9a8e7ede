// Package natsmap configures a toolgate NATS server's account subject
// mapping of the claimed subjects (issue 37, wire.ClaimedMapping): the
// server, not the producer, picks a claimed response's partition. Every
// place that configures a toolgate server uses it: the embedded server of
// `toolgate up` and of tests (Apply), and the configuration files of the
// nats-server processes, deploy/ and the Helm chart (Conf).
package natsmap

import (
	"fmt"
	"strconv"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Apply adds the mapping of P = p to s's global account (the account of a
// server configured with users and no accounts, as toolgate's are);
// nothing for p <= 1.
func Apply(s *server.Server, p int) error {
	src, dest := wire.ClaimedMapping(p)
	if src == "" {
		return nil
	}
	if err := s.GlobalAccount().AddMapping(src, dest); err != nil {
		return fmt.Errorf("natsmap: map %s to %s: %w", src, dest, err)
	}
	return nil
}

// Conf is the mapping of P = p as a nats-server configuration block, at
// the top level (the global account's); "" for p <= 1.
func Conf(p int) string {
	src, dest := wire.ClaimedMapping(p)
	if src == "" {
		return ""
	}
	return "mappings {\n  " + strconv.Quote(src) + ": " + strconv.Quote(dest) + "\n}\n"
}
