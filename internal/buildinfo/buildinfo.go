// Package buildinfo says which netmortem this is: its version, the commit it
// was built from, and the Go toolchain, for `netmortem version` and for the
// machine-readable outputs (JSON, YAML, SARIF, batch lines).
//
// The version comes, in order, from the link-time variables (set by release
// builds with -ldflags "-X github.com/netmortem/netmortem/internal/buildinfo.version=v1.2.3"
// and likewise commit and date), from the module version recorded by
// `go install ...@v1.2.3`, and else is "devel". The commit and its date come
// from the link-time variables or from the VCS stamp `go build` records in a
// git checkout (vcs.revision, vcs.time, vcs.modified).
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Set at link time by release builds (see the package documentation).
var (
	version = ""
	commit  = ""
	date    = ""
)

// Info describes the running binary.
type Info struct {
	// Name is "netmortem".
	Name string `json:"name" yaml:"name"`
	// Version is a semantic version ("v1.2.3"), a Go pseudo-version, or
	// "devel" for a build from a source tree.
	Version string `json:"version" yaml:"version"`
	// Commit is the git revision built, when known.
	Commit string `json:"commit,omitempty" yaml:"commit,omitempty"`
	// Date is the commit's time (RFC 3339), when known.
	Date string `json:"date,omitempty" yaml:"date,omitempty"`
	// Modified reports a build from a tree with uncommitted changes.
	Modified bool `json:"modified,omitempty" yaml:"modified,omitempty"`
	// Go is the toolchain that built the binary ("go1.26.8").
	Go string `json:"go,omitempty" yaml:"go,omitempty"`
}

// Get returns the running binary's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return from(bi, version, commit, date)
}

// from builds the Info of build info bi (nil when the binary has none) and
// the link-time values v, c and d, which win over what bi records.
func from(bi *debug.BuildInfo, v, c, d string) Info {
	info := Info{Name: "netmortem", Version: v, Commit: c, Date: d}
	if bi != nil {
		info.Go = bi.GoVersion
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if c == "" {
					info.Commit = s.Value
				}
			case "vcs.time":
				if d == "" {
					info.Date = s.Value
				}
			case "vcs.modified":
				if c == "" {
					info.Modified = s.Value == "true"
				}
			}
		}
	}
	if info.Version == "" {
		info.Version = "devel"
	}
	return info
}

// String formats i as `netmortem version` prints it:
// "netmortem v1.2.3 (commit 0123abcd4567, 2026-11-24T10:00:00Z, go1.26.8)",
// "netmortem devel (commit 0123abcd4567, modified, go1.26.8)".
func (i Info) String() string {
	var extra []string
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		extra = append(extra, "commit "+c)
	}
	if i.Date != "" {
		extra = append(extra, i.Date)
	}
	if i.Modified {
		extra = append(extra, "modified")
	}
	if i.Go != "" {
		extra = append(extra, i.Go)
	}
	s := i.Name + " " + i.Version
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}
