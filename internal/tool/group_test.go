package tool

import (
	"fmt"
	"strings"
	"testing"
)

// executor.circuit_open is wait (the default) or fail; anything else is
// refused when the definitions load (tools apply), never read as wait.
func TestGroup_circuit_open_is_wait_or_fail(t *testing.T) {
	def := func(v string) []byte {
		return []byte(`
tools:
  - name: erp_post
    input_schema: {type: object}
    executor: {group: erp, circuit_open: ` + v + `}
`)
	}
	for v, fails := range map[string]bool{"wait": false, "fail": true} {
		defs, err := Load("t", def(v))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if defs[0].FailsFast() != fails {
			t.Errorf("%s: FailsFast %v", v, defs[0].FailsFast())
		}
	}
	if _, err := Load("t", def("drop")); err == nil || !strings.Contains(err.Error(), "executor.circuit_open") {
		t.Fatalf("circuit_open: drop: error %v, want it refused", err)
	}
}

// executor.retry is checked when the definitions load: attempts within
// bounds, each delay a duration of at least a second (a retry waits as a
// message scheduled to the second).
func TestGroup_retry_schedule_is_checked(t *testing.T) {
	def := func(r string) []byte {
		return []byte(`
tools:
  - name: erp_post
    input_schema: {type: object}
    executor: {group: erp, retry: ` + r + `}
`)
	}
	defs, err := Load("t", def(`{attempts: 4, backoff: [1s, 5s, 1m]}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := defs[0]; d.RetryAttempts() != 4 || fmt.Sprint(d.RetryBackoff()) != "[1s 5s 1m0s]" {
		t.Fatalf("attempts %d backoff %v", d.RetryAttempts(), d.RetryBackoff())
	}
	for _, bad := range []string{`{attempts: -1}`, `{attempts: 101}`, `{backoff: [200ms]}`, `{backoff: [soon]}`, `{backoff: [48h]}`} {
		if _, err := Load("t", def(bad)); err == nil || !strings.Contains(err.Error(), "executor.retry") {
			t.Errorf("retry %s: error %v, want it refused", bad, err)
		}
	}
}

// Two tools of one executor group share its concurrency: the group runs
// the largest. A file that gives them different values (or leaves one at
// the default while the other asks for fewer) is refused, naming both, so
// "at most 2 at once to the ERP" cannot silently become 8.
func TestLoad_tools_of_one_group_must_agree_on_its_concurrency(t *testing.T) {
	const two = `
tools:
  - name: erp_invoice
    input_schema: {type: object}
    executor: {group: erp, concurrency: 2}
  - name: erp_refund
    input_schema: {type: object}
    executor: {group: erp%s}
  - name: get_weather
    input_schema: {type: object}
    executor: {concurrency: 4}
`
	for _, c := range []struct{ name, second, want string }{
		{"same", ", concurrency: 2", ""},
		{"different", ", concurrency: 3", "tools.yaml: tool erp_refund: executor.concurrency: 3, but tool erp_invoice of the same executor group erp runs 2"},
		{"default", "", "tools.yaml: tool erp_refund: executor.concurrency: 8 (the default), but tool erp_invoice of the same executor group erp runs 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defs, err := Load("tools.yaml", []byte(strings.Replace(two, "%s", c.second, 1)))
			if c.want == "" {
				if err != nil || len(defs) != 3 || defs[1].Concurrency() != 2 {
					t.Fatalf("got %v, %v; want three tools, erp at 2", defs, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}
