package stage

import (
	"fmt"
	"strconv"
	"strings"
)

// MinServerVersion is the oldest nats-server the stages run against: the
// execute gate's retries and waits are scheduled messages (2.12) and an
// open circuit is a paused consumer (2.11). The README's "Deploying" page
// states it; a stage checks it at start (checkServerVersion).
const MinServerVersion = "2.12.0"

// checkServerVersion refuses a server older than min, naming both, so a
// stage on an old nats-server fails at start with what to upgrade instead
// of failing later on the first retry it schedules.
func checkServerVersion(got, min string) error {
	g, ok := parseVersion(got)
	if !ok {
		return fmt.Errorf("stage: the NATS server reports version %q, which is not a version: toolgate needs nats-server %s or newer", got, min)
	}
	m, _ := parseVersion(min)
	for i := range g {
		if g[i] != m[i] {
			if g[i] < m[i] {
				return fmt.Errorf("stage: the NATS server is %s; toolgate needs nats-server %s or newer (message schedules and consumer pause): upgrade the server", got, min)
			}
			return nil
		}
	}
	return nil
}

// parseVersion reads major.minor.patch, ignoring a pre-release or build
// suffix ("2.12.0-RC.1", "2.11.3+binary").
func parseVersion(v string) ([3]int, bool) {
	var out [3]int
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return out, false
		}
		out[i] = n
	}
	return out, true
}
