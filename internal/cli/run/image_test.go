package run

import (
	"encoding/json"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rs/zerolog"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// imageCommand is the CMD of the Dockerfile: what `docker run toolgate`
// runs.
func imageCommand(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var cmd []string
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "CMD "); ok {
			cmd = nil
			if err := json.Unmarshal([]byte(rest), &cmd); err != nil {
				t.Fatalf("CMD %s: %v (want the exec form)", rest, err)
			}
		}
	}
	if len(cmd) < 2 || cmd[0] != "/usr/local/bin/toolgate" || cmd[1] != "up" {
		t.Fatalf("image CMD %v, want toolgate up", cmd)
	}
	return cmd[2:]
}

// Before, the image's default `toolgate up` listened on 127.0.0.1 inside
// the container, where no published port reaches it. Now it listens on
// every interface, and is authenticated there: no --insecure, and a
// connection without a password is refused.
func TestImage_default_up_listens_on_every_interface_authenticated(t *testing.T) {
	args := imageCommand(t)
	uf := NewUpFlags(func(string) string { return "" })
	ops, err := cmdutil.ParseFlags(uf.FS, args)
	if err != nil || len(ops) > 0 {
		t.Fatalf("image CMD flags %v: %v %v", args, ops, err)
	}
	f, err := uf.stage()
	if err != nil {
		t.Fatal(err)
	}
	for name, addr := range map[string]string{"--listen": *uf.listen, "--http": f.Config.HTTPAddr} {
		host, _, err := net.SplitHostPort(addr)
		if err != nil || isLoopback(host) {
			t.Errorf("image %s %q: want every interface (0.0.0.0), which a published port reaches", name, addr)
		}
	}
	if *uf.trust.insecure {
		t.Fatal("the image runs --insecure")
	}
	host, _, _ := net.SplitHostPort(*uf.listen)
	*uf.trust.secrets = t.TempDir()
	opts := &server.Options{Host: host}
	lp, err := uf.trust.setup(opts, zerolog.Nop())
	if err != nil || lp == nil {
		t.Fatalf("image up: %v, %v; want least privilege", lp, err)
	}
	if opts.NoAuthUser != "" {
		t.Errorf("the image lets a connection without a password in as %q", opts.NoAuthUser)
	}
}
