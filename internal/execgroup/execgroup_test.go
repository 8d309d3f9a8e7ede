package execgroup

import (
	"strings"
	"testing"
)

func TestValid_takes_only_a_bounded_subject_token(t *testing.T) {
	for _, g := range []string{"erp", "a-b_C9", strings.Repeat("x", 64)} {
		if !Valid(g) {
			t.Errorf("%q refused", g)
		}
	}
	for _, g := range []string{"", "a.b", "a*", "a>", "a b", strings.Repeat("x", 65), "é"} {
		if Valid(g) {
			t.Errorf("%q taken", g)
		}
	}
}
