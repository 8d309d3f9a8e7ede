package tools

import (
	"regexp"
	"testing"
)

// tools ls shows the executor group each tool's calls wait in, its
// concurrency, the executor's timeout and the group's retry schedule: the
// ones a definition sets, and the defaults (a group of its own, 8, 10s, 10
// attempts doubling to 30s) for one that sets none.
func TestToolsLs_shows_each_tools_group_concurrency_and_timeout(t *testing.T) {
	r := newToolsRig(t)
	tools := r.file("tools.yaml", `
tools:
  - name: create_invoice
    description: Creates an invoice in the ERP.
    input_schema: {type: object}
    executor: {group: erp, concurrency: 2, timeout: 30s, retry: {attempts: 4, backoff: [1s, 5s]}}
    policy: {risk: write}
  - name: get_weather
    description: Current weather.
    input_schema: {type: object}
    policy: {risk: read}
`)
	r.mustRun("", "apply", "-f", tools)
	ls, _ := r.mustRun("", "ls")
	for _, re := range []string{
		`EXECUTOR\s+GROUP\s+CONCURRENCY\s+TIMEOUT\s+RETRY\s+DESCRIPTION`,
		`create_invoice\s+\d+\s+write\s+no\s+nats toolgate\.exec\.create_invoice\s+erp\s+2\s+30s\s+4x:1s,5s\s+Creates`,
		`get_weather\s+\d+\s+read\s+no\s+nats toolgate\.exec\.get_weather\s+get_weather\s+8\s+10s\s+10x:doubling-to-30s\s+Current`,
	} {
		if !regexp.MustCompile(re).MatchString(ls) {
			t.Errorf("tools ls lacks %s:\n%s", re, ls)
		}
	}
}
