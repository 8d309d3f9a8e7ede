package natsproc

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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

// ports are k distinct free ports below the kernel's range of ephemeral
// ports (ephemeralLow), where no outgoing connection takes its local port
// and no listener on port 0 is put: the nodes start one after the other
// and dial each other's routes meanwhile, and a port picked as port 0's
// once went to such a dial, or to another test, before its node listened
// (a cluster that never elected a meta leader). Port 0's where the range
// leaves no room below it.
func ports(k int) ([]int, error) {
	lo, hi := 10000, ephemeralLow()
	if hi-lo < 1000 {
		return testenvPorts(k)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))
	out, seen := make([]int, 0, k), map[int]bool{}
	for tries := 0; len(out) < k && tries < 1000; tries++ {
		p := lo + rng.IntN(hi-lo)
		if seen[p] {
			continue
		}
		seen[p] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue // taken
		}
		l.Close()
		out = append(out, p)
	}
	if len(out) < k {
		return testenvPorts(k)
	}
	return out, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// ip_local_port_range), 32768 where it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return n
}

// testenvPorts are k free ports picked as port 0's.
func testenvPorts(k int) ([]int, error) {
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
