package natsproc

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate/internal/testenv"
)

// configure writes the node's configuration under dir (the options of the
// embedded server, testenv.StartNATS, and extra: a cluster block) and
// makes its store.
func (n *Node) configure(dir, extra string) error {
	store := filepath.Join(dir, n.name)
	if err := os.MkdirAll(store, 0o755); err != nil {
		return fmt.Errorf("natsproc: %w", err)
	}
	n.conf, n.log = filepath.Join(dir, n.name+".conf"), filepath.Join(dir, n.name+".log")
	text := fmt.Sprintf("server_name: %q\nlisten: \"127.0.0.1:%d\"\nhttp: \"127.0.0.1:%d\"\nmax_payload: 16MB\njetstream { store_dir: %q }\n%s",
		n.name, n.port, n.monitor, store, extra)
	if err := os.WriteFile(n.conf, []byte(text), 0o644); err != nil {
		return fmt.Errorf("natsproc: %w", err)
	}
	return nil
}

// ports are k free ports.
func ports(k int) ([]int, error) {
	out := make([]int, k)
	for i := range out {
		p, err := testenv.Port()
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}
