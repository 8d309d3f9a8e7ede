package stage

import (
	"flag"
	"strings"
	"testing"
)

// parseFlags is the stage's flags parsed from args, env standing for the
// environment.
func parseFlags(args []string, env map[string]string) (Flagged, error) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	get := Flags(fs, func(k string) string { return env[k] }, Defaults{})
	if err := fs.Parse(args); err != nil {
		return Flagged{}, err
	}
	return get()
}

func TestFlags_hop_encoding(t *testing.T) {
	if f, err := parseFlags(nil, nil); err != nil || f.Config.JSONHops {
		t.Fatalf("default: JSONHops %v (%v), want the hop encoding", f.Config.JSONHops, err)
	}
	if f, err := parseFlags(nil, map[string]string{"TOOLGATE_HOP_ENCODING": "json"}); err != nil || !f.Config.JSONHops {
		t.Fatalf("TOOLGATE_HOP_ENCODING=json: JSONHops %v (%v)", f.Config.JSONHops, err)
	}
	if _, err := parseFlags([]string{"--hop-encoding", "xml"}, nil); err == nil || !strings.Contains(err.Error(), "binary or json") {
		t.Fatalf("--hop-encoding xml: %v, want an error naming binary and json", err)
	}
}

// --audit-stream (TOOLGATE_AUDIT_STREAM) is off by default: the audit event
// rides in the result only (issue 30).
func TestFlags_audit_stream(t *testing.T) {
	if f, err := parseFlags(nil, nil); err != nil || f.Config.AuditStream {
		t.Fatalf("default: AuditStream %v (%v), want false", f.Config.AuditStream, err)
	}
	if f, err := parseFlags(nil, map[string]string{"TOOLGATE_AUDIT_STREAM": "true"}); err != nil || !f.Config.AuditStream {
		t.Fatalf("TOOLGATE_AUDIT_STREAM=true: AuditStream %v (%v)", f.Config.AuditStream, err)
	}
	if f, err := parseFlags([]string{"--audit-stream", "true"}, nil); err != nil || !f.Config.AuditStream {
		t.Fatalf("--audit-stream true: AuditStream %v (%v)", f.Config.AuditStream, err)
	}
	if _, err := parseFlags([]string{"--audit-stream", "maybe"}, nil); err == nil || !strings.Contains(err.Error(), "true or false") {
		t.Fatalf("--audit-stream maybe: %v, want an error", err)
	}
}
