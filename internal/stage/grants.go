package stage

import (
	"strings"

	"github.com/toolgate/toolgate/internal/authz"
)

// mayFunc reports whether this process may publish to every subject given
// ($JS.API requests included): what it reads beyond its own work (metrics'
// streams and buckets, a waiting call's record) is only asked for when its
// NATS user is granted it, so a least-privilege stage never trips a
// permissions violation.
type mayFunc func(subjects ...string) bool

// grantsOf is the mayFunc of a process running cfg. A process that applies
// the topology itself (no SkipEnsure) runs as a user that may do anything;
// one that does not runs as its stage's least-privilege user
// (authz.Stage), and may only what the grants of its stages allow.
func grantsOf(cfg Config) mayFunc {
	if !cfg.SkipEnsure {
		return func(...string) bool { return true }
	}
	var allow []string
	for _, st := range cfg.Stages {
		if p, err := authz.StageLayout(st, cfg.Settings.Fair.Lanes, cfg.Settings.Fair.PartitionCount()); err == nil {
			allow = append(allow, p.Publish...)
		}
	}
	return func(subjects ...string) bool {
		for _, s := range subjects {
			ok := false
			for _, a := range allow {
				if ok = subjectMatches(a, s); ok {
					break
				}
			}
			if !ok {
				return false
			}
		}
		return true
	}
}

// subjectMatches reports whether subject falls under the NATS filter
// (tokens, '*' for one token, '>' for the rest).
func subjectMatches(filter, subject string) bool {
	f, s := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, tok := range f {
		switch {
		case tok == ">":
			return len(s) > i
		case i >= len(s):
			return false
		case tok != "*" && tok != s[i]:
			return false
		}
	}
	return len(f) == len(s)
}
