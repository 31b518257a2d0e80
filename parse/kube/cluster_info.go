package kube

import (
	"bufio"
	"bytes"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// VersionFormat reads the version the apiserver reports.
var VersionFormat = &format.Format{
	Name:    "kube-version",
	Kind:    model.KindKube,
	Command: "kubectl version -o json (its serverVersion), kubectl version, troubleshoot's cluster-info/cluster_version.json",
	Doc: "the apiserver's gitVersion (v1.31.2+k3s1), major, minor, platform and build date, from " +
		"JSON or from kubectl version's text (`Server Version:`, also as version.Info{...}); " +
		"kubectl's own clientVersion is not kept. `version-skew` compares the kubelets with it",
	Sniff: sniffVersion,
	Parse: format.Records(readVersion, func(s *model.Snapshot, out []model.ServerVersion) {
		s.ServerVersions = append(s.ServerVersions, out...)
	}, "versions"),
}

// DNSDebugFormat reads troubleshoot's DNS debug report.
var DNSDebugFormat = &format.Format{
	Name:    "dns-debug",
	Kind:    model.KindDNS,
	Command: "troubleshoot's dns collector (dns/debug.json)",
	Doc: "the kubernetes Service's ClusterIP, the test pod's resolv.conf (nameservers, search, " +
		"ndots), each lookup and the address it gave (empty when it did not resolve), the " +
		"cluster DNS pods, Service ClusterIP and endpoints",
	Sniff: sniffDNSDebug,
	Parse: format.Records(readDNSDebug, func(s *model.Snapshot, out []model.DNSCheck) {
		s.DNSChecks = append(s.DNSChecks, out...)
	}, "checks"),
}

var (
	versionKeysRe  = lazyre.New(`"(gitVersion|major|minor|serverVersion|info)"\s*:`)
	dnsDebugKeysRe = lazyre.New(`"(kubernetesClusterIP|podResolvConf|kubeDNSService|kubeDNSEndpoints|kubeDNSPods)"\s*:`)
)

// jsonKeys counts the distinct keys of re found in a JSON object's head.
func jsonKeys(head []byte, re *lazyre.Regexp) map[string]bool {
	seen := map[string]bool{}
	if t := bytes.TrimSpace(head); !text.IsText(head) || len(t) == 0 || t[0] != '{' {
		return seen
	}
	for _, m := range re.FindAllSubmatch(head, 50) {
		seen[string(m[1])] = true
	}
	return seen
}

func sniffVersion(_ string, head []byte) int {
	k := jsonKeys(head, versionKeysRe)
	if k["gitVersion"] && k["major"] && k["minor"] && (k["serverVersion"] || k["info"]) {
		return 95
	}
	// kubectl version's text.
	server := false
	matched, total, _ := text.SniffLines(head, 20, func(cmd string) bool { return strings.HasPrefix(cmd, "kubectl version") }, func(line string) text.Match {
		switch {
		case strings.HasPrefix(line, "Server Version: "):
			server = true
			return text.Hit
		case strings.HasPrefix(line, "Client Version: "), strings.HasPrefix(line, "Kustomize Version: "):
			return text.Hit
		case strings.HasPrefix(line, "WARNING: "):
			return text.Skip
		}
		return text.Miss
	})
	if !server {
		return 0
	}
	return min(text.RatioScore(matched, total, 95), 95)
}

func sniffDNSDebug(_ string, head []byte) int {
	if k := jsonKeys(head, dnsDebugKeysRe); len(k) >= 3 {
		return 95
	}
	return 0
}

// Version reads the apiserver's version from `kubectl version -o json`
// ({"serverVersion": {...}}), troubleshoot's cluster_version.json
// ({"info": {...}, "string": "v1.31.2+k3s1"}) or kubectl version's text
// ("Server Version: v1.31.2+k3s1", or the version.Info struct kubectl
// printed before 1.28). name is used in positions.
func Version(r io.Reader, name string) ([]model.ServerVersion, error) {
	return format.ReadAll(r, name, readVersion)
}

func readVersion(r io.Reader, src *format.File, errs *model.ErrorList) []model.ServerVersion {
	br := bufio.NewReader(r)
	if first, _ := br.Peek(512); !bytes.HasPrefix(bytes.TrimSpace(first), []byte("{")) {
		return readVersionText(br, src, errs)
	}
	root, ok := jsonRoot(br, src, errs)
	if !ok {
		return nil
	}
	v := mapValue(root, "serverVersion")
	if v == nil {
		v = mapValue(root, "info")
	}
	if v == nil || v.Kind != yaml.MappingNode {
		errs.Addf(src.Pos(root.Line), "", "%w: expected the apiserver's version (\"serverVersion\" or \"info\" with gitVersion)", format.ErrSyntax)
		return nil
	}
	sv := model.ServerVersion{GitVersion: scalar(v, "gitVersion"), Major: scalar(v, "major"), Minor: scalar(v, "minor"),
		Platform: scalar(v, "platform"), BuildDate: scalar(v, "buildDate"), Pos: src.Pos(v.Line)}
	if g := mapValue(v, "gitVersion"); g != nil {
		sv.Pos.Line = g.Line
	}
	if sv.GitVersion == "" {
		errs.Addf(sv.Pos, "", "%w: the version has no gitVersion", format.ErrSyntax)
		return nil
	}
	return []model.ServerVersion{sv}
}

// versionInfoRe reads the Go struct kubectl version printed before 1.28:
// version.Info{Major:"1", Minor:"21", GitVersion:"v1.21.1", ...}.
var versionInfoRe = lazyre.New(`(\w+):"([^"]*)"`)

// readVersionText reads kubectl version's text: "Server Version:
// v1.31.2+k3s1", or "Server Version: version.Info{Major:"1", ...}" before
// kubectl 1.28. The client's and kustomize's versions, and kubectl's skew
// warning, are passed over; any other line is reported.
func readVersionText(r io.Reader, src *format.File, errs *model.ErrorList) []model.ServerVersion {
	var out []model.ServerVersion
	text.ReadLines(r, src, errs, text.Hooks{}, func(l *text.Line) {
		k, v, ok := strings.Cut(l.Trimmed, ": ")
		switch {
		case ok && k == "Server Version":
			sv := model.ServerVersion{GitVersion: strings.TrimSpace(v), Pos: l.Pos()}
			if strings.HasPrefix(sv.GitVersion, "version.Info{") {
				f := map[string]string{}
				for _, m := range versionInfoRe.FindAllStringSubmatch(v, -1) {
					f[m[1]] = m[2]
				}
				sv.GitVersion, sv.Major, sv.Minor, sv.Platform, sv.BuildDate = f["GitVersion"], f["Major"], f["Minor"], f["Platform"], f["BuildDate"]
			} else if major, rest, ok := strings.Cut(strings.TrimPrefix(sv.GitVersion, "v"), "."); ok {
				sv.Major, _, _ = strings.Cut(major, " ")
				sv.Minor, _, _ = strings.Cut(rest, ".")
			}
			if sv.GitVersion == "" || strings.ContainsAny(sv.GitVersion, " \t") {
				l.Errorf("%w: expected the server's version (\"Server Version: v1.31.2\")", format.ErrSyntax)
				return
			}
			out = append(out, sv)
		case ok && (k == "Client Version" || k == "Kustomize Version"), strings.HasPrefix(l.Trimmed, "WARNING: "),
			strings.HasPrefix(l.Trimmed, "The connection to the server"):
		default:
			l.Errorf("%w: expected kubectl version's lines (\"Server Version: v1.31.2\")", format.ErrSyntax)
		}
	})
	return out
}

// DNSDebug reads troubleshoot's dns/debug.json. name is used in positions.
func DNSDebug(r io.Reader, name string) ([]model.DNSCheck, error) {
	return format.ReadAll(r, name, readDNSDebug)
}

func readDNSDebug(r io.Reader, src *format.File, errs *model.ErrorList) []model.DNSCheck {
	root, ok := jsonRoot(r, src, errs)
	if !ok {
		return nil
	}
	c := model.DNSCheck{Pos: src.Pos(root.Line), ResolvConf: scalar(root, "podResolvConf")}
	addr := func(key string) netip.Addr {
		s := scalar(root, key)
		if s == "" {
			return netip.Addr{}
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			errs.Addf(src.Pos(mapValue(root, key).Line), "", "%w: %s %q is not an IP address", format.ErrSyntax, key, s)
		}
		return a
	}
	c.ClusterIP, c.DNSService = addr("kubernetesClusterIP"), addr("kubeDNSService")
	for l := range strings.SplitSeq(c.ResolvConf, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "nameserver":
			if a, err := netip.ParseAddr(f[1]); err == nil {
				c.Nameservers = append(c.Nameservers, a)
			}
		case "search":
			c.Search = append(c.Search, f[1:]...)
		case "options":
			for _, o := range f[1:] {
				if n, ok := strings.CutPrefix(o, "ndots:"); ok {
					c.Ndots, _ = strconv.Atoi(n)
				}
			}
		}
	}
	if q := mapValue(root, "query"); q != nil && q.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(q.Content); i += 2 {
			c.Queries = append(c.Queries, model.DNSQuery{Check: q.Content[i].Value, Name: scalar(q.Content[i+1], "name"), Address: scalar(q.Content[i+1], "address")})
		}
	}
	if p := mapValue(root, "kubeDNSPods"); p != nil && p.Kind == yaml.SequenceNode {
		for _, it := range p.Content {
			c.DNSPods = append(c.DNSPods, it.Value)
		}
	}
	// kubeDNSEndpoints: "10.42.0.6:53", several joined by commas or spaces.
	for ep := range strings.FieldsFuncSeq(scalar(root, "kubeDNSEndpoints"), func(r rune) bool { return r == ',' || r == ' ' }) {
		ap, err := netip.ParseAddrPort(ep)
		if err != nil {
			errs.Addf(src.Pos(mapValue(root, "kubeDNSEndpoints").Line), "", "%w: kube-dns endpoint %q is not IP:PORT", format.ErrSyntax, ep)
			continue
		}
		c.DNSEndpoints = append(c.DNSEndpoints, ap)
	}
	return []model.DNSCheck{c}
}

// jsonRoot decodes r, one JSON object, as a YAML node (which keeps lines).
func jsonRoot(r io.Reader, src *format.File, errs *model.ErrorList) (*yaml.Node, bool) {
	var doc yaml.Node
	if err := yaml.NewDecoder(r).Decode(&doc); err != nil {
		pos := src.Pos(1)
		if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil {
			pos.Line, _ = strconv.Atoi(m[1])
		}
		errs.Addf(pos, "", "%w: not valid JSON: %v", format.ErrSyntax, err)
		return nil, false
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		errs.Addf(src.Pos(max(doc.Line, 1)), "", "%w: expected a JSON object", format.ErrSyntax)
		return nil, false
	}
	return doc.Content[0], true
}
