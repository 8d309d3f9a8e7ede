package main

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/toolgate/toolgate/internal/cli/cmdutil"
)

// versionCmd prints the module version and the VCS revision the binary was
// built from (toolgate version, toolgate --version).
func versionCmd(args []string) error {
	fs := cmdutil.WithUsage(flag.NewFlagSet("version", flag.ContinueOnError), "version", "")
	ops, err := cmdutil.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return cmdutil.UsageError("version takes no operands")
	}
	bi, ok := debug.ReadBuildInfo()
	fmt.Println(versionLine(bi, ok))
	return nil
}

// versionLine is "toolgate VERSION (revision R, TIME, modified) GO OS/ARCH"
// from the build information: the module version ("(devel)" for a build of
// a checkout) and the vcs.* settings `go build` stamps.
func versionLine(bi *debug.BuildInfo, ok bool) string {
	version := "(unknown)"
	var vcs []string
	if ok && bi != nil {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		var rev, at string
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			vcs = append(vcs, "revision "+rev)
		}
		if at != "" {
			vcs = append(vcs, at)
		}
		if modified {
			vcs = append(vcs, "modified")
		}
	}
	line := "toolgate " + version
	if len(vcs) > 0 {
		line += " (" + strings.Join(vcs, ", ") + ")"
	}
	return line + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}
