package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, tt := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"a tagged module", debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0"},
		{"a git checkout's pseudo-version", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260101120000-0123456789ab+dirty"}},
			"v0.0.0-20260101120000-0123456789ab+dirty"},
		{"devel with a revision", debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: settings("vcs.revision", "0123456789abcdef0123", "vcs.modified", "false")}, "devel-0123456789ab"},
		{"devel with local changes", debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: settings("vcs.revision", "0123456789abcdef0123", "vcs.modified", "true")}, "devel-0123456789ab-dirty"},
		{"nothing known", debug.BuildInfo{}, "devel"},
	} {
		if got := fromBuildInfo(&tt.info); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestLinkerVersionWins: a version set with -ldflags -X is the one
// reported, and the agent is built from it.
func TestLinkerVersionWins(t *testing.T) {
	defer func(v string) { Version = v }(Version)
	Version = "v1.2.3"
	if String() != "v1.2.3" || Agent() != "leiosnode/v1.2.3" {
		t.Errorf("String %q, Agent %q; want v1.2.3 and leiosnode/v1.2.3", String(), Agent())
	}
}
