package e2e

import (
	"path/filepath"
	"testing"
)

// admin publishes the example response file as an admin principal would,
// as scripts/run.sh does: its one call is the response id's call -0.
func (u *up) publish(t *testing.T, rid, file string, who ...string) string {
	t.Helper()
	args := append([]string{"publish", "--provider", "openai-chat", "--response-id", rid}, who...)
	u.mustCLI(t, append(args, filepath.Join("examples", "responses", file))...)
	return rid + "-0"
}

// asAdmin are publish's identity flags of scripts/run.sh's admin caller.
var asAdmin = []string{"--principal", "ops-1", "--roles", "admin"}
