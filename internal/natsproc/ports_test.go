package natsproc

import (
	"net"
	"strconv"
	"testing"
)

// A cluster's nine ports are distinct, free, and below the kernel's
// ephemeral range, where no outgoing connection (the nodes dial each
// other's routes while they start one by one) can take one before its
// node listens.
func TestPorts_are_distinct_free_and_below_the_ephemeral_range(t *testing.T) {
	low := ephemeralLow()
	got, err := ports(9)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range got {
		if seen[p] {
			t.Errorf("port %d picked twice in %v", p, got)
		}
		seen[p] = true
		if p >= low {
			t.Errorf("port %d is in the ephemeral range (from %d): %v", p, low, got)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Errorf("port %d is not free: %v", p, err)
			continue
		}
		l.Close()
	}
}
