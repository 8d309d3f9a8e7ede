// Package embedded configures an embedded nats-server (`toolgate up`'s, the
// tests') with the claimed subjects' mapping (natsmap). Apart from natsmap,
// which only writes configuration text, because the stages must not link
// nats-server (internal/arch).
package embedded

import (
	"fmt"

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
