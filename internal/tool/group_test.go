package tool

import (
	"strings"
	"testing"
)

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
