package rules

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// KubeProxyConntrackReadonly finds kube-proxy exiting at start because it
// cannot write the node's conntrack limits.
var KubeProxyConntrackReadonly = &analyzer.Rule{
	Name:        "kube-proxy-conntrack-readonly",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindLogs},
	SubjectKeys: []string{"node", "component"},
	Run:         runKubeProxyConntrackReadonly,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(279), DNSTimeouts.At(96)},
	Proof: "kube-proxy's own line that it cannot write nf_conntrack_max or the conntrack hash size (\"open " +
		"/proc/sys/net/netfilter/nf_conntrack_max: permission denied\"), fatal, with the value it was setting",
	Unproven: "that the node is a container (kind, minikube's docker driver, k3d) on a kernel where the limit is " +
		"read-only outside the host's network namespace: `uname -r` on the host and the node's runtime decide",
	Doc: `kube-proxy cannot write the node's conntrack limits

At start kube-proxy raises the node's conntrack table to what its
configuration asks (conntrack maxPerCore times the cores, at least min):
it writes /proc/sys/net/netfilter/nf_conntrack_max, and the table's hash
size in /sys/module/nf_conntrack/parameters/hashsize. Where it cannot,
it exits ("F0513 server.go:495] open
/proc/sys/net/netfilter/nf_conntrack_max: permission denied", or
"Error running ProxyServer" with that error), restarts, and exits again:
no Service is programmed on the node while it crash-loops.

Since Linux 5.12.2 (and 5.10.35) nf_conntrack_max is read-only in any
network namespace but the host's, so a node that is itself a container
(kind, minikube's docker driver, k3d) makes every kube-proxy of a
release that writes it exit; sysfs mounted read-only in a container
refuses the hash size the same way.

Evidence: kube-proxy's lines, per kube-proxy (its node, or its file),
with "Set sysctl 'net/netfilter/nf_conntrack_max' to N" before them.

Severity: a warning, of likely cause: the line names what kube-proxy
could not write.

Fix: leave the limits as they are: conntrack maxPerCore 0 (and min 0)
in the KubeProxyConfiguration, or --conntrack-max-per-core=0 (kind from
0.11 and minikube from 1.20.0 set it); or raise nf_conntrack_max on the
host first, to at least what kube-proxy asks, since kube-proxy does not
write a limit already high enough.`,
}

var (
	// kpConntrackWriteRe is kube-proxy's error writing a conntrack limit.
	kpConntrackWriteRe = lazyre.New(`(?:open|write) (/proc/sys/net/netfilter/nf_conntrack_max|/sys/module/nf_conntrack/parameters/hashsize): (permission denied|read-only file system|operation not supported|operation not permitted)`)
	// kpConntrackSetRe is kube-proxy's line before it writes the limit.
	kpConntrackSetRe = lazyre.New(`Set sysctl '(net/netfilter/nf_conntrack_max)' to (\d+)`)
)

// kpConntrackReadonly is one kube-proxy's failures to write a limit.
type kpConntrackReadonly struct {
	node, comp  string
	path, why   string
	first, last *model.LogEvent
	count       int
	want        string // the value it was setting nf_conntrack_max to, "" when not shown
}

func runKubeProxyConntrackReadonly(p *analyzer.Pass) error {
	var groups []*kpConntrackReadonly
	byKey := map[string]*kpConntrackReadonly{}
	want := map[string]string{} // per kube-proxy, the last value it set out to write
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		k := le.Node + "\x00" + le.Pos.File
		if le.Node != "" {
			k = le.Node
		}
		text := logText(le)
		if m := kpConntrackSetRe.FindStringSubmatch(text); m != nil {
			want[k] = m[2]
			continue
		}
		m := kpConntrackWriteRe.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		g := byKey[k]
		if g == nil {
			g = &kpConntrackReadonly{node: le.Node, comp: subjectComponent(le.Source, le.Pos.File), path: m[1], why: m[2],
				first: le}
			byKey[k] = g
			groups = append(groups, g)
		}
		if g.want == "" {
			g.want = want[k]
		}
		g.last = le
		g.count++
	}
	for _, g := range groups {
		p.Report(kpConntrackFinding(g))
	}
	return nil
}

// kpConntrackFinding judges one kube-proxy's failures.
func kpConntrackFinding(g *kpConntrackReadonly) analyzer.Finding {
	on := onNode(g.node)
	what := "nf_conntrack_max"
	if strings.HasSuffix(g.path, "hashsize") {
		what = "the conntrack table's hash size"
	}
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "component", g.comp),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Title:     fmt.Sprintf("kube-proxy%s exits: it cannot write %s (%s)", on, what, g.why),
		Summary: fmt.Sprintf("kube-proxy%s stops at start because writing %s fails (%s), %s: it crash-loops, and no "+
			"Service is programmed on the node meanwhile.", on, g.path, g.why, times(g.count)),
		Fix: "Set conntrack maxPerCore: 0 (and min: 0) in kube-proxy's KubeProxyConfiguration (--conntrack-max-per-" +
			"core=0), so that it leaves the limits as they are; or raise nf_conntrack_max on the host first.",
		Facts:    map[string]any{"path": g.path, "error": g.why, "lines": g.count},
		Evidence: []analyzer.Evidence{{Pos: g.first.Pos, Note: g.path + ": " + g.why}},
		Supports: []string{fmt.Sprintf("%s: %s: %s", g.first.Pos, g.path, g.why)},
		Decide: "# on the host that runs the node: its kernel, whether the node is a container, and the limit\n" +
			"uname -r; cat /proc/sys/net/netfilter/nf_conntrack_max",
	}
	if g.last != g.first {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.last.Pos, Note: "again"})
	}
	if g.want != "" {
		f.Facts["asked"] = g.want
		f.Summary = strings.Replace(f.Summary, "fails", "to "+g.want+" fails", 1)
	}
	if what == "nf_conntrack_max" {
		f.Cause = "kube-proxy runs in a network namespace where nf_conntrack_max is read-only: the node is itself a " +
			"container (kind, minikube's docker driver, k3d) on a kernel of 5.12.2 or later (5.10.35 in 5.10), which " +
			"lets only the host's namespace write it."
		f.Alternatives = []string{"kube-proxy's container is not privileged, or its /proc/sys is mounted read-only"}
	} else {
		f.Cause = "kube-proxy cannot write the conntrack module's hash size: /sys is read-only where it runs (a node " +
			"that is itself a container, or an unprivileged kube-proxy)."
		f.Alternatives = []string{"the conntrack module is built into the kernel, whose hash size cannot be changed there"}
		f.Decide = "# where kube-proxy runs: is /sys mounted read-only?\ngrep ' /sys ' /proc/mounts"
	}
	return f
}
