package chaos

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// httpChildEnv makes the test binary httpChild.
const httpChildEnv = "TOOLGATE_CHAOS_TEST_HTTP_CHILD"

// httpChild serves /readyz on TOOLGATE_HTTP_ADDR, as a stage does, and
// exits 1 when it cannot listen there, as a stage does.
func httpChild() {
	l, err := net.Listen("tcp", os.Getenv(strings.TrimSuffix(httpAddrEnv, "=")))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {})
	_ = http.Serve(l, mux)
	os.Exit(1)
}

// A stage process killed while another process takes its HTTP port (any
// process may, even as the local port of an outgoing connection) starts
// again on a free one and is ready, instead of failing to listen at every
// restart (a chaos run once lost 112 calls so: accumulate never came back).
func TestProc_restarted_while_its_port_is_taken_is_ready_on_another(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	first := l.Addr().String()
	l.Close()
	p := &proc{stage: "stage", bin: os.Args[0], http: first, log: filepath.Join(t.TempDir(), "stage.log"),
		env: []string{httpChildEnv + "=1", httpAddrEnv + first}}
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop(5 * time.Second) })
	if err := p.ready(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !p.kill() {
		t.Fatal("the stage was not running")
	}
	taken, err := net.Listen("tcp", first) // before the supervisor's restart, 200 ms on
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	if err := p.ready(30 * time.Second); err != nil {
		log, _ := os.ReadFile(p.log)
		t.Fatalf("not ready again with %s taken: %v\n%s", first, err, log)
	}
	if p.addr() == first {
		t.Errorf("ready again on %s, which another process holds", first)
	}
}
