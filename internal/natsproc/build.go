package natsproc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// Version runs bin --version and returns the version it names (e.g.
// "v2.15.2").
func Version(bin string) (string, error) {
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("natsproc: %s --version: %v: %s", bin, err, out)
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return "", fmt.Errorf("natsproc: %s --version printed nothing", bin)
	}
	return f[len(f)-1], nil
}

// Check refuses a nats-server binary of another version than the one the
// project embeds (server.VERSION): a run on another version says nothing
// about the one toolgate ships with.
func Check(bin string) error {
	v, err := Version(bin)
	if err != nil {
		return err
	}
	if strings.TrimPrefix(v, "v") != strings.TrimPrefix(server.VERSION, "v") {
		return fmt.Errorf("natsproc: %s is nats-server %s, the project embeds %s (build it: go build -o DIR/nats-server github.com/nats-io/nats-server/v2)", bin, v, server.VERSION)
	}
	return nil
}

// Build builds the nats-server the module requires into dir with `go
// build` (offline from the module cache) and returns its path.
func Build(dir string) (string, error) {
	p := filepath.Join(dir, "nats-server")
	cmd := exec.Command(GoTool(), "build", "-o", p, "github.com/nats-io/nats-server/v2")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("natsproc: go build nats-server: %v\n%s", err, out.String())
	}
	return p, nil
}

// GoTool is the go command: on PATH, or in $GOROOT/bin (set by `go test`).
func GoTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "go"
}
