package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFrom(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"},
			{Key: "vcs.time", Value: "2026-11-24T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	installed := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}}
	for _, tc := range []struct {
		name    string
		bi      *debug.BuildInfo
		v, c, d string
		want    string
	}{
		{"no build info", nil, "", "", "", "netmortem devel"},
		{"source tree", stamped, "", "", "", "netmortem devel (commit 0123456789ab, 2026-11-24T10:00:00Z, modified, go1.26.8)"},
		{"go install @version", installed, "", "", "", "netmortem v1.2.3 (go1.26.8)"},
		{"ldflags win", stamped, "v2.0.0", "fedcba9876543210", "2026-12-01T00:00:00Z", "netmortem v2.0.0 (commit fedcba987654, 2026-12-01T00:00:00Z, go1.26.8)"},
	} {
		if got := from(tc.bi, tc.v, tc.c, tc.d).String(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestGet(t *testing.T) {
	i := Get()
	if i.Name != "netmortem" || i.Version == "" {
		t.Errorf("Get() = %+v: want a name and a version", i)
	}
}
