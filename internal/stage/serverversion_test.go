package stage

import (
	"strings"
	"testing"
)

func TestCheckServerVersion_refuses_an_older_server_and_names_the_minimum(t *testing.T) {
	for _, v := range []string{"2.9.25", "2.11.9", "1.20.0", "2.12.0-RC.1x", "garbage", ""} {
		err := checkServerVersion(v, "2.12.0")
		if v == "2.12.0-RC.1x" {
			if err != nil {
				t.Errorf("%s: %v", v, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "2.12.0") {
			t.Errorf("version %q: got %v, want a refusal naming 2.12.0", v, err)
		}
	}
	for _, v := range []string{"2.12.0", "2.12.3", "2.15.2", "3.0.0", "v2.13.1+binary"} {
		if err := checkServerVersion(v, "2.12.0"); err != nil {
			t.Errorf("version %q refused: %v", v, err)
		}
	}
}
