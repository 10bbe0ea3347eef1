package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// runVersion is `madebook version` (and `madebook --version`).
func runVersion(_ context.Context, c stdio, args []string) error {
	f := newFlags("version", "madebook version",
		"Print Madebook's version, the commit it was built from (\"modified\" when the tree held\n"+
			"uncommitted changes) and the Go version that built it, on one line. The version is\n"+
			"\"(devel)\" outside a module release; the commit \"unknown\" when the build recorded\n"+
			"none (outside a git checkout, or -buildvcs=false).")
	if err := f.parse(c, args); err != nil {
		return err
	}
	info, _ := debug.ReadBuildInfo()
	_, err := io.WriteString(c.stdout, versionLine(info))
	return err
}

// versionLine is what version prints, from the binary's build
// information (nil: none).
func versionLine(info *debug.BuildInfo) string {
	version, commit, goVersion := "(devel)", "unknown", runtime.Version()
	if info != nil {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && commit != "unknown" {
			commit += " (modified)"
		}
	}
	return fmt.Sprintf("madebook %s, commit %s, %s\n", version, commit, goVersion)
}
