// Package version says which leiosnode this is: the version the binary
// prints, and the agent it announces to its libp2p peers through identify,
// so an operator can tell which build each peer runs.
//
// It reads only the build's own metadata and must never import another
// package of the project.
package version

import "runtime/debug"

// Version, when set at link time, is the version this build reports:
//
//	go build -ldflags "-X github.com/leiosnode/leiosnode/internal/version.Version=v0.4.0" ./cmd/leiosnode
//
// Only the linker writes it; empty means ask the build info.
var Version string

// String is this build's version: Version if the linker set it, else the
// main module's version Go stamped into the binary (a tag, or a
// pseudo-version with the commit for a build from a git checkout), else
// "devel" with the VCS revision, else "devel".
func String() string {
	if Version != "" {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return fromBuildInfo(info)
}

// Agent is the libp2p identify agent version of this build:
// "leiosnode/<version>".
func Agent() string { return "leiosnode/" + String() }

// fromBuildInfo is String's reading of the build info.
func fromBuildInfo(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var revision string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if revision == "" {
		return "devel"
	}
	v := "devel-" + revision[:min(len(revision), 12)]
	if modified {
		v += "-dirty"
	}
	return v
}
