package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// ConntrackCleanupFailed finds kube-proxy failing to delete the conntrack
// entries of UDP endpoints that are gone.
var ConntrackCleanupFailed = &analyzer.Rule{
	Name:        "conntrack-cleanup-failed",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindLogs},
	SubjectKeys: []string{"node", "component"},
	Run:         runConntrackCleanupFailed,
	Symptoms:    []analyzer.SymptomRef{DNSTimeouts.At(35)},
	Proof: "kube-proxy's own line (\"Failed to delete stale service connections ... error looking for path of " +
		"conntrack: executable file not found in $PATH\"): the conntrack tool it deletes entries with is not in its " +
		"PATH, so the UDP entries of every endpoint that goes stay",
	Unproven: "the stale entries themselves take conntrack -L on the node (conntrack-stale-udp); the tool failing " +
		"to talk to the kernel (\"Can't open handler\") is netfilter-extension-missing's",
	Doc: `kube-proxy cannot delete stale udp conntrack entries

When a UDP Service's endpoint goes (a CoreDNS Pod deleted or moved),
kube-proxy rewrites its rules and deletes the conntrack entries that still
carry flows to the old endpoint: a UDP flow's entry outlives the change for
as long as datagrams keep coming, so a resolver that reuses its socket
keeps sending to the gone Pod, and its lookups time out (conntrack-stale-udp).
kube-proxy releases that delete the entries with the conntrack tool
(conntrack-tools) cannot do so without it, and log at every change
"Failed to delete stale service connections" err="error deleting
  connection tracking state for UDP service IP: 10.43.0.10, error: error
  looking for path of conntrack: exec: \"conntrack\": executable file not
  found in $PATH" (older: "Failed to delete stale service IP 10.96.0.10
  connections", "conntrack return with error: Error looking for path of
  conntrack"; newer: "Failed to delete endpoint connections" with the
  Service's port name). (The tool there but unable to talk to the kernel,
"Can't open handler", is netfilter-extension-missing's.)

Evidence: kube-proxy's lines (its Pod's log, its journal, or k3s's and
k8e's, which run it inside their own process), with the Services they
name.

Severity: a warning, the tool missing from kube-proxy's PATH named as
likely: the line says so, and the stale entries it leaves take conntrack
-L to see.

Fix: install the conntrack tool where kube-proxy runs (the conntrack or
conntrack-tools package on the node for kube-proxy run by systemd, or
kube-proxy's image), restart kube-proxy, and delete the entries already
stale (conntrack -D -p udp --orig-dst SERVICE-IP).`,
}

var (
	// conntrackNotFoundRe matches kube-proxy's failure to find the
	// conntrack tool, as its releases worded it.
	conntrackNotFoundRe = lazyre.New(`(?i)error looking for path of conntrack`)
	// conntrackServiceRe finds what a line names of the Service whose
	// entries were not deleted: its IP, its port name, its node port.
	conntrackServiceRe = lazyre.New(`(?:UDP service IP: |stale service IP |\b[iI][pP]=")([0-9A-Fa-f.:]+)|servicePortName="([^"]+)"|UDP port: (\d+)`)
)

// conntrackCleanup is one kube-proxy's failures to find the tool.
type conntrackCleanup struct {
	node, comp string
	services   []string // the Services named, in the order met
	lineRun
}

// runConntrackCleanupFailed reads kube-proxy's failures to find the
// conntrack tool, per node and component.
func runConntrackCleanupFailed(p *analyzer.Pass) error {
	var groups []*conntrackCleanup
	byKey := map[string]*conntrackCleanup{}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		if !strings.Contains(le.Message, "conntrack") && !fieldsHold(le.Fields, "conntrack") {
			continue
		}
		text := logText(le)
		if !conntrackNotFoundRe.MatchString(text) || !kubeProxyCleanup(le, text) {
			continue
		}
		comp := logComponent(le, "kube-proxy")
		k := le.Node + "\x00" + comp
		g := byKey[k]
		if g == nil {
			g = &conntrackCleanup{node: le.Node, comp: comp}
			byKey[k] = g
			groups = append(groups, g)
		}
		var named []string
		for _, m := range conntrackServiceRe.FindAllStringSubmatch(text, -1) {
			s := m[1] + m[2]
			if m[3] != "" {
				s = "node port " + m[3] + "/udp"
			}
			named = append(named, s)
		}
		// klog's structured lines, their key="value" pairs parsed into
		// fields.
		for _, k := range []string{"servicePortName", "ip", "IP"} {
			if v := le.Fields[k]; v != "" {
				named = append(named, v)
			}
		}
		for _, s := range named {
			if !slices.Contains(g.services, s) {
				g.services = append(g.services, s)
			}
		}
		g.add(le)
	}
	for _, g := range groups {
		p.Report(conntrackCleanupFinding(g))
	}
	return nil
}

// kubeProxyCleanup reports whether le, of text, is kube-proxy's (its own
// log, or its proxier's lines inside k3s and k8e) or names the UDP
// Service entries it deletes: other programs that look for the tool
// (OpenYurt's tunnel server, for TCP entries) are not this.
func kubeProxyCleanup(le *model.LogEvent, text string) bool {
	if facts.IsKubeProxyLog(le) || strings.Contains(text, "proxier.go:") || strings.HasPrefix(le.Fields["caller"], "proxier.go:") {
		return true
	}
	for _, w := range []string{"UDP service IP", "UDP port", "UDP peer", "stale service", "conntrack return with error"} {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// conntrackCleanupFinding judges and words one kube-proxy's failures.
func conntrackCleanupFinding(g *conntrackCleanup) analyzer.Finding {
	who := g.comp + onNode(g.node)
	of := ""
	if len(g.services) > 0 {
		of = " (" + listSome(g.services, false) + ")"
	}
	return analyzer.Finding{
		Subject:   subject("node", g.node, "component", g.comp),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts:     map[string]any{"lines": g.count, "services": g.services, "component": g.comp},
		Title:     fmt.Sprintf("%s cannot delete stale UDP conntrack entries: the conntrack tool is not in its PATH", who),
		Summary: fmt.Sprintf("%s failed to delete the conntrack entries of UDP endpoints that went%s, %s. Each "+
			"such entry keeps sending its flow to the gone endpoint for as long as datagrams keep coming: a resolver "+
			"that reuses its socket keeps asking a deleted CoreDNS Pod, and its lookups time out while the Service, "+
			"its endpoints and the rules look right.", who, of, times(g.count)),
		Supports: []string{fmt.Sprintf("%s: %s did not find the conntrack tool it deletes entries with",
			g.first.Pos, g.comp)},
		Cause: fmt.Sprintf("The conntrack tool (conntrack-tools) is not installed where %s runs: on the node, for "+
			"kube-proxy run by systemd or inside k3s, or in kube-proxy's image.", g.comp),
		Alternatives: []string{"the tool is installed outside the PATH kube-proxy runs with (a systemd unit's " +
			"Environment=PATH)"},
		Fix: fmt.Sprintf("Install the conntrack tool where %s runs (the conntrack or conntrack-tools package on the "+
			"node, or kube-proxy's image) and restart %s; then delete the entries already stale: conntrack "+
			"-D -p udp --orig-dst SERVICE-IP.", g.comp, g.comp),
		Decide: "# where kube-proxy runs (in its Pod: kubectl -n kube-system exec POD -- conntrack --version): " +
			"\"not found\" decides\nconntrack --version",
		Evidence: g.evidence("conntrack tool not found", "the last such line"),
	}
}
