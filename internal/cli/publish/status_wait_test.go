package publish

import (
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pipeline"
)

func TestDescribeWait_says_what_the_call_waits_for_and_what_ends_it(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		name string
		w    pipeline.Wait
		want []string
	}{
		{"executor", pipeline.Wait{Stage: "execute", For: pipeline.WaitExecutor, Detail: "no executor listens on toolgate.exec.transfer_funds",
			Attempt: 3, Of: 10, Since: now.Add(-32 * time.Second), Next: now.Add(4 * time.Second)},
			[]string{"waiting for an executor: no executor listens on toolgate.exec.transfer_funds — attempt 3 of 10, next in 4s", "32s ago, at execute"}},
		{"approval", pipeline.Wait{Stage: "policy", For: pipeline.WaitApproval, By: []string{"finance", "admin"}, Until: now.Add(12 * time.Minute), Since: now},
			[]string{"waiting for approval by finance or admin until ", "(expires in 12m)", "toolgate approve r1-0 --by NAME"}},
		{"approval expired", pipeline.Wait{For: pipeline.WaitApproval, Until: now.Add(-2 * time.Minute)},
			[]string{"expired 2m ago", "approval_expired"}},
		{"retry overdue", pipeline.Wait{For: pipeline.WaitRetry, Detail: "redis: connection refused", Attempt: 2, Next: now.Add(-time.Second)},
			[]string{"waiting to retry: redis: connection refused — attempt 2, next attempt due (1s ago)"}},
		{"unbounded", pipeline.Wait{For: "something", Detail: "a\nb\x1b[2J"}, []string{"waiting for something: a b"}},
	} {
		got := describeWait(c.w, "r1-0", now)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
		if strings.ContainsRune(got, '\x1b') || strings.ContainsRune(got, '\n') {
			t.Errorf("%s: control characters in %q", c.name, got)
		}
		if c.w.For != pipeline.WaitApproval && strings.Contains(got, "toolgate approve") {
			t.Errorf("%s: suggests approve: %q", c.name, got)
		}
	}
}
