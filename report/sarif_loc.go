package report

import (
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/netmortem/netmortem/internal/buildinfo"
	"github.com/netmortem/netmortem/internal/lazyre"
)

// The base URIs of SARIF artifact locations (run.originalUriBaseIds):
// every artifactLocation names one in its uriBaseId.
const (
	// sarifBundle is the directory netmortem ran in: the paths given on
	// the command line, and so the files of positions, are relative to it.
	// Its URI is left to the consumer (a code-scanning service takes its
	// checkout).
	sarifBundle     = "BUNDLE"
	sarifBundleText = "The directory netmortem was run in: the input paths as given, and the files of the findings' positions, are relative to it."
	// sarifRoot is the root of the file system, the base of the files
	// given by absolute paths.
	sarifRoot = "ROOT"
	// sarifFingerprintKey names a finding's Fingerprint among a result's
	// partialFingerprints; the version changes if the way fingerprints are
	// computed does.
	sarifFingerprintKey = "netmortem/v1"
)

// sarifArtifact turns a position's file into an artifact location: a
// relative URI reference ("/" separated, percent-encoded) with its base,
// BUNDLE for a relative path and ROOT for an absolute one. An archive's
// member ("bundle.tar.gz!node1/sysctl.txt") is a path inside the archive
// ("bundle.tar.gz/node1/sysctl.txt").
func sarifArtifact(file string) sarifArtifactLocation {
	slash := filepath.ToSlash(file)
	base := sarifBundle
	if filepath.IsAbs(file) || path.IsAbs(slash) {
		base = sarifRoot
		slash = strings.TrimLeft(slash, "/")
	}
	var parts []string
	for _, seg := range strings.Split(archiveMembers(slash), "/") {
		// A colon is escaped too: in the first segment of a relative
		// reference it would read as a URI scheme.
		parts = append(parts, strings.ReplaceAll(url.PathEscape(seg), ":", "%3A"))
	}
	return sarifArtifactLocation{URI: strings.Join(parts, "/"), URIBaseID: base}
}

// archiveExt matches the names of archives netmortem reads members of.
var archiveExt = lazyre.New(`(?i)\.(tar|tgz|txz|tbz2?|tzst|zip)(\.(gz|xz|bz2|zst))?$`)

// archiveMembers replaces the "!" that joins an archive's name and a
// member's path with "/". A "!" after a name that is not an archive's
// (by its extension) is kept, as part of the name.
func archiveMembers(p string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(p, '!')
		if i < 0 {
			b.WriteString(p)
			return b.String()
		}
		b.WriteString(p[:i])
		if name := p[strings.LastIndexAny(p[:i], "/!")+1 : i]; archiveExt.MatchString(name) {
			b.WriteByte('/')
		} else {
			b.WriteByte('!')
		}
		p = p[i+1:]
	}
}

// semver matches a semantic version (2.0.0) after an optional "v".
var semver = lazyre.New(`^v?((0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?)$`)

// sarifDriverFor describes netmortem as the run's tool: its version, and
// the semantic version when the version is one (not for "devel").
func sarifDriverFor(info buildinfo.Info) sarifDriver {
	d := sarifDriver{
		Name:           "netmortem",
		Version:        info.Version,
		InformationURI: "https://github.com/netmortem/netmortem",
		Rules:          []sarifRule{},
	}
	if m := semver.FindStringSubmatch(info.Version); m != nil {
		d.SemanticVersion = m[1]
	}
	props := map[string]any{}
	if info.Commit != "" {
		props["commit"] = info.Commit
	}
	if info.Modified {
		props["modified"] = true
	}
	if info.Go != "" {
		props["go"] = info.Go
	}
	if len(props) > 0 {
		d.Properties = props
	}
	return d
}

// sarifUsesRoot reports whether a location of run is based on ROOT.
func sarifUsesRoot(run sarifRun) bool {
	uses := func(locs []sarifLocation) bool {
		for _, l := range locs {
			if l.PhysicalLocation != nil && l.PhysicalLocation.ArtifactLocation.URIBaseID == sarifRoot {
				return true
			}
		}
		return false
	}
	for _, res := range run.Results {
		if uses(res.Locations) || uses(res.RelatedLocations) {
			return true
		}
	}
	for _, inv := range run.Invocations {
		for _, n := range inv.ToolExecutionNotifications {
			if uses(n.Locations) {
				return true
			}
		}
	}
	return false
}
