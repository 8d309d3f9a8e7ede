package streams

import (
	"testing"
	"time"
)

// A result carries its call's audit event (issue 30), so the results
// stream keeps results as long as the audit keeps events when that is
// longer; TOOLGATE_AUDIT keeps its own age.
func TestStreamConfigs_results_keep_the_audit_retention(t *testing.T) {
	ages := func(s Settings) map[string]time.Duration {
		out := map[string]time.Duration{}
		for _, c := range s.StreamConfigs() {
			out[c.Name] = c.MaxAge
		}
		return out
	}
	s := DefaultSettings()
	s.ResultMaxAge, s.AuditMaxAge = 24*time.Hour, 90*24*time.Hour
	if got := ages(s); got[StreamResults] != 90*24*time.Hour || got[StreamAudit] != 90*24*time.Hour {
		t.Fatalf("results %v, audit %v: want both the audit's 90 days", got[StreamResults], got[StreamAudit])
	}
	s.ResultMaxAge, s.AuditMaxAge = 30*24*time.Hour, 7*24*time.Hour
	if got := ages(s); got[StreamResults] != 30*24*time.Hour || got[StreamAudit] != 7*24*time.Hour {
		t.Fatalf("results %v, audit %v: want 30 and 7 days", got[StreamResults], got[StreamAudit])
	}
}
