package tool

import (
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
