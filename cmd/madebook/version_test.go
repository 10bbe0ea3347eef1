package main

import (
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionLine(t *testing.T) {
	t.Parallel()
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	const rev = "9acd330c6f0f3b1c1d1e2a3b4c5d6e7f80911223"
	for _, c := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}, Settings: settings("vcs.revision", rev, "vcs.modified", "false")},
			"madebook v1.4.0, commit " + rev + ", go1.26.8\n"},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: settings("vcs", "git", "vcs.revision", rev, "vcs.modified", "true")},
			"madebook (devel), commit " + rev + " (modified), go1.26.8\n"},
		{&debug.BuildInfo{GoVersion: "go1.26.8"}, "madebook (devel), commit unknown, go1.26.8\n"}, // go test, go build -buildvcs=false
		{nil, "madebook (devel), commit unknown, " + runtime.Version() + "\n"},                    // no build information at all
		{&debug.BuildInfo{Settings: settings("vcs.modified", "true")}, "madebook (devel), commit unknown, " + runtime.Version() + "\n"},
	} {
		if got := versionLine(c.info); got != c.want {
			t.Errorf("versionLine(%+v) = %q, want %q", c.info, got, c.want)
		}
	}
}

// The built binary names the commit its build recorded (a git checkout's,
// unless -buildvcs=false) and the Go that built it; `version` and `--version` say
// the same.
func TestVersionOfTheBuiltBinary(t *testing.T) {
	t.Parallel()
	bin := buildMadebook(t)
	code, out, stderr := runBinary(t, bin, nil, "version")
	if code != 0 || stderr.Len() > 0 {
		t.Fatalf("version: exit %d, stderr %q", code, stderr.String())
	}
	line := out.String()
	if !strings.HasPrefix(line, "madebook ") || !strings.HasSuffix(line, ", "+runtime.Version()+"\n") {
		t.Errorf("version printed %q, want madebook VERSION, commit REV, %s", line, runtime.Version())
	}
	// What the build recorded (nothing with -buildvcs=false, as this
	// machine's GOFLAGS may set), as `go version -m` reads it.
	meta, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	commit := "unknown"
	for _, l := range strings.Split(string(meta), "\n") {
		if rev, ok := strings.CutPrefix(strings.TrimSpace(l), "build\tvcs.revision="); ok {
			commit = rev
		}
	}
	if !strings.Contains(line, ", commit "+commit) {
		t.Errorf("version printed %q, want the commit the build recorded, %s", line, commit)
	}
	if code, again, _ := runBinary(t, bin, nil, "--version"); code != 0 || again.String() != line {
		t.Errorf("--version: exit %d, %q; want %q", code, again.String(), line)
	}
}
