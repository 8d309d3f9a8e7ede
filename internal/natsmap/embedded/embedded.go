// Package embedded configures an embedded nats-server (`toolgate up`'s, the
// tests') with the partitions' mappings (natsmap). Apart from natsmap,
// which only writes configuration text, because the stages must not link
// nats-server (internal/arch).
package embedded

import (
	"fmt"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/toolgate/toolgate/pkg/wire"
)

// Apply adds the mappings of P = p (wire.Mappings) to s's global account
// (the account of a server configured with users and no accounts, as
// toolgate's are); nothing for p <= 1.
func Apply(s *server.Server, p int) error {
	for _, m := range wire.Mappings(p) {
		if err := s.GlobalAccount().AddMapping(m.Src, m.Dest); err != nil {
			return fmt.Errorf("natsmap: map %s to %s: %w", m.Src, m.Dest, err)
		}
	}
	return nil
}
