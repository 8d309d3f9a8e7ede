package testenv

import (
	"fmt"
	"net"
	"testing"
)

// Port returns a TCP port on 127.0.0.1 that was free a moment ago.
func Port() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("testenv: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreePort is Port for a test: an error fails it.
func FreePort(t testing.TB) int {
	t.Helper()
	p, err := Port()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
