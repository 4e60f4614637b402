package main

import (
	"fmt"
	"runtime/debug"
)

// Set through -ldflags by goreleaser; left at these values by `go build` and
// `go install`, where currentBuild reads the Go toolchain's build info instead.
var (
	version = "dev"
	commit  = "none"
	date    = "unknown"
)

// buildInfo identifies the running binary for `infrarust version`, `--version`,
// the admin API's stats and infrarust_build_info.
type buildInfo struct {
	Version, Commit, Date string
}

// String is the one-line form every place prints.
func (b buildInfo) String() string {
	return fmt.Sprintf("%s (commit %s, built %s)", b.Version, b.Commit, b.Date)
}

// currentBuild is this binary's build: the -ldflags values when a release set
// them, else what `go install module@version` or `go build` in a checkout
// recorded (module version, VCS revision and commit time).
func currentBuild() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	return resolveBuild(buildInfo{version, commit, date}, bi, ok)
}

// resolveBuild fills the fields -ldflags left at their defaults from bi.
func resolveBuild(ld buildInfo, bi *debug.BuildInfo, ok bool) buildInfo {
	b := ld
	if !ok || bi == nil {
		return b
	}
	if b.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Version = bi.Main.Version
	}
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Commit == "none" && s.Value != "" {
				b.Commit = s.Value
			}
		case "vcs.time":
			if b.Date == "unknown" && s.Value != "" {
				b.Date = s.Value
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && ld.Commit == "none" && b.Commit != "none" {
		b.Commit += "-dirty"
	}
	return b
}
