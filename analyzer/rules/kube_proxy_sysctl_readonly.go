package rules

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// KubeProxySysctlReadonly finds kube-proxy exiting at start because it
// cannot write a kernel setting it needs.
var KubeProxySysctlReadonly = &analyzer.Rule{
	Name:        "kube-proxy-sysctl-readonly",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindLogs},
	SubjectKeys: []string{"node", "component"},
	Run:         runKubeProxySysctlReadonly,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(279), DNSTimeouts.At(96)},
	Proof: "kube-proxy's own line that it cannot write a kernel setting (\"open " +
		"/proc/sys/net/netfilter/nf_conntrack_max: permission denied\", \"can't set sysctl " +
		"net/ipv4/conf/all/route_localnet: ... read-only file system\"), with the value it was setting",
	Unproven: "what makes the setting read-only: a node that is itself a container on a kernel of 5.12.2 or later " +
		"(nf_conntrack_max), or /proc/sys or /sys mounted read-only in kube-proxy's container; `uname -r` on the " +
		"host and the mounts where kube-proxy runs decide",
	Doc: `kube-proxy cannot write the kernel settings it needs

At start kube-proxy writes kernel settings: it raises the conntrack
table (/proc/sys/net/netfilter/nf_conntrack_max, and the table's hash
size in /sys/module/nf_conntrack/parameters/hashsize) to what its
configuration asks, and in iptables mode sets route_localnet so that
NodePorts answer on 127.0.0.1. Where it cannot, it exits ("F0513
server.go:495] open /proc/sys/net/netfilter/nf_conntrack_max: permission
denied", "unable to create proxier: can't set sysctl
net/ipv4/conf/all/route_localnet: ... read-only file system"), restarts,
and exits again: no Service is programmed on the node while it
crash-loops.

Since Linux 5.12.2 (and 5.10.35) nf_conntrack_max is read-only in any
network namespace but the host's, so a node that is itself a container
(kind, minikube's docker driver, k3d) makes every kube-proxy of a
release that writes it exit. A /proc/sys or /sys mounted read-only in
kube-proxy's container (not privileged, or a runtime or kubelet that
masks it: Kubernetes 1.12.0's betas did so for privileged containers
too) refuses every setting the same way.

Evidence: kube-proxy's lines, per kube-proxy (its node, or its file),
with "Set sysctl 'net/netfilter/nf_conntrack_max' to N" before them.

Severity: a warning, of likely cause: the line names what kube-proxy
could not write, and how it was refused.

Fix: for nf_conntrack_max, leave the limits as they are: conntrack
maxPerCore 0 (and min 0) in the KubeProxyConfiguration, or
--conntrack-max-per-core=0 (kind from 0.11 and minikube from 1.20.0 set
it), or raise nf_conntrack_max on the host first, since kube-proxy does
not write a limit already high enough; for a read-only /proc/sys or
/sys, run kube-proxy privileged, with them writable.`,
}

var (
	// kpSysctlWriteRe is kube-proxy's error writing a kernel setting: the
	// file and how it was refused.
	kpSysctlWriteRe = lazyre.New(`(?:open|write) (/proc/sys/\S+|/sys/module/nf_conntrack/parameters/hashsize): (permission denied|read-only file system|operation not supported|operation not permitted)`)
	// kpSysctlSetRe is kube-proxy's line before it writes the limit.
	kpSysctlSetRe = lazyre.New(`Set sysctl '(net/netfilter/nf_conntrack_max)' to (\d+)`)
)

// kpSysctlReadonly is one kube-proxy's failures to write a setting.
type kpSysctlReadonly struct {
	node, comp string
	path, why  string
	lineRun
	want string // the value it was setting nf_conntrack_max to, "" when not shown
}

func runKubeProxySysctlReadonly(p *analyzer.Pass) error {
	var groups []*kpSysctlReadonly
	byKey := map[string]*kpSysctlReadonly{}
	want := map[string]string{} // per kube-proxy, the last value it set out to write
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		k := le.Node + "\x00" + le.Pos.File
		if le.Node != "" {
			k = le.Node
		}
		text := logText(le)
		if m := kpSysctlSetRe.FindStringSubmatch(text); m != nil {
			want[k] = m[2]
			continue
		}
		m := kpSysctlWriteRe.FindStringSubmatch(text)
		if m == nil || !kpSysctlLine(le, text) {
			continue
		}
		g := byKey[k]
		if g == nil {
			g = &kpSysctlReadonly{node: le.Node, comp: subjectComponent(le.Source, le.Pos.File), path: m[1], why: m[2]}
			byKey[k] = g
			groups = append(groups, g)
		}
		if g.want == "" {
			g.want = want[k]
		}
		g.add(le)
	}
	for _, g := range groups {
		p.Report(kpSysctlFinding(g))
	}
	return nil
}

// kpSysctlLine reports whether le, whose text refuses a write to a kernel
// setting, is kube-proxy's: its log, or its words around the setting
// ("can't set sysctl", "unable to create proxier", the conntrack limits
// only kube-proxy writes).
func kpSysctlLine(le *model.LogEvent, text string) bool {
	src := strings.ToLower(le.Source + " " + le.Pos.File)
	return strings.Contains(src, "proxy") || strings.Contains(text, "can't set sysctl") ||
		strings.Contains(text, "unable to create proxier") || strings.Contains(text, "nf_conntrack")
}

// kpSysctlFinding judges one kube-proxy's failures.
func kpSysctlFinding(g *kpSysctlReadonly) analyzer.Finding {
	on := onNode(g.node)
	what := strings.TrimPrefix(g.path, "/proc/sys/")
	switch {
	case strings.HasSuffix(g.path, "hashsize"):
		what = "the conntrack table's hash size"
	case strings.HasSuffix(g.path, "nf_conntrack_max"):
		what = "nf_conntrack_max"
	}
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "component", g.comp),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Title:     fmt.Sprintf("kube-proxy%s exits: it cannot write %s (%s)", on, what, g.why),
		Summary: fmt.Sprintf("kube-proxy%s stops at start because writing %s fails (%s), %s: it crash-loops, and no "+
			"Service is programmed on the node meanwhile.", on, g.path, g.why, times(g.count)),
		Facts:    map[string]any{"path": g.path, "error": g.why, "lines": g.count},
		Evidence: g.evidence(g.path+": "+g.why, "again"),
		Supports: []string{fmt.Sprintf("%s: %s: %s", g.first.Pos, g.path, g.why)},
	}
	if g.want != "" {
		f.Facts["asked"] = g.want
		f.Summary = strings.Replace(f.Summary, "fails", "to "+g.want+" fails", 1)
	}
	mount := "/proc/sys"
	if strings.HasPrefix(g.path, "/sys/") {
		mount = "/sys"
	}
	switch {
	case what == "nf_conntrack_max" && g.why != "read-only file system":
		f.Cause = "kube-proxy runs in a network namespace where nf_conntrack_max is read-only: the node is itself a " +
			"container (kind, minikube's docker driver, k3d) on a kernel of 5.12.2 or later (5.10.35 in 5.10), which " +
			"lets only the host's namespace write it."
		f.Alternatives = []string{"kube-proxy's container is not privileged, or its /proc/sys is mounted read-only"}
		f.Fix = "Set conntrack maxPerCore: 0 (and min: 0) in kube-proxy's KubeProxyConfiguration (--conntrack-max-per-" +
			"core=0), so that it leaves the limits as they are; or raise nf_conntrack_max on the host first."
		f.Decide = "# on the host that runs the node: its kernel, whether the node is a container, and the limit\n" +
			"uname -r; cat /proc/sys/net/netfilter/nf_conntrack_max"
	default:
		f.Cause = fmt.Sprintf("%s is mounted read-only where kube-proxy runs: its container is not privileged, or the "+
			"runtime or kubelet masks it (Kubernetes 1.12.0's betas did so for privileged containers too), or the "+
			"node is itself a container.", mount)
		f.Alternatives = []string{"a security profile (AppArmor, SELinux) denies the write"}
		if mount == "/sys" {
			f.Alternatives = append(f.Alternatives, "the conntrack module is built into the kernel, whose hash size "+
				"cannot be changed there")
		}
		f.Fix = fmt.Sprintf("Run kube-proxy privileged with %s writable (its DaemonSet's securityContext), or, for the "+
			"conntrack limits, set conntrack maxPerCore: 0 so that it does not write them.", mount)
		f.Decide = fmt.Sprintf("# where kube-proxy runs: is %s mounted read-only?\ngrep ' %s ' /proc/mounts", mount, mount)
	}
	return f
}
