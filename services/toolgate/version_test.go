package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionLine_module_version_revision_time_and_modified(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "877bf90660fd"}, {Key: "vcs.time", Value: "2026-12-01T14:39:31Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"release", bi, true, "toolgate v1.2.3 (revision 877bf90660fd, 2026-12-01T14:39:31Z, modified) go"},
		{"devel without vcs", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "toolgate (devel) go"},
		{"no build info", nil, false, "toolgate (unknown) go"},
	} {
		if got := versionLine(c.bi, c.ok); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want it to start %q", c.name, got, c.want)
		}
	}
}
