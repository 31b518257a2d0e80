package rules

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// InotifyLimitReached finds components that cannot start or watch files
// because the node's inotify limits are used up.
var InotifyLimitReached = &analyzer.Rule{
	Name:        "inotify-limit-reached",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindLogs},
	Uses:        []model.Kind{model.KindSysctl},
	SubjectKeys: []string{"node", "component", "limit"},
	Run:         runInotifyLimitReached,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(185), DNSTimeouts.At(190)},
	Proof: "not from a component's line alone: \"failed complete: too many open files\" (kube-proxy), " +
		"\"inotify_init: too many open files\" or \"failed to create fsnotify watcher: too many open files\" name the " +
		"inotify instances of the node's user used up as likely; the count of instances against " +
		"fs.inotify.max_user_instances decides",
	Unproven: "the process's own open-file limit gives the same error: the finding is of likely cause, with the " +
		"command that counts the node's inotify instances",
	Doc: `the node's inotify limits are used up

Programs watch files through inotify: kube-proxy its configuration file
(in Complete(), at start), the kubelet its lock file and cgroups,
controllers their certificates, kubectl logs -f the container's log.
The instances and watches one user (root, for every container on a node
that runs them as root) may hold are limited per node, not per container:
fs.inotify.max_user_instances, 128 by default on many distributions, and
fs.inotify.max_user_watches. Many containers, or several kind clusters on
one host, use them up; then the next program that asks for an instance
fails with "too many open files" (EMFILE), and for a watch with "no space
left on device":

- kube-proxy: "command failed" err="failed complete: too many open
  files", and it crash-loops: the node's Services, kube-dns's among them,
  get no rules;
- the kubelet: "failed to run Kubelet: inotify_init: too many open files";
- kubectl logs -f and controllers: "failed to create fsnotify watcher: too
  many open files", "failed to new ca-cert watcher: too many open files";
- inotify_add_watch ...: no space left on device (max_user_watches).

"accept tcp ...: too many open files" and other sockets' EMFILE are the
process's own open-file limit, not this.

Evidence: the components' log lines; the node's sysctl values when the
bundle has them.

Severity: a warning of likely cause: the same error comes from a process
at its own open-file limit; the count of inotify instances decides.

Fix: raise the limits on the node (for kind, on the host):
sysctl -w fs.inotify.max_user_instances=512 fs.inotify.max_user_watches=524288,
kept in /etc/sysctl.d; then restart what failed (kube-proxy's Pods).`,
}

// inotifyLineRe matches a component's failure for want of an inotify
// instance or watch; the first group names the instance's failure, the
// second the watch's.
var inotifyLineRe = lazyre.New(`(failed complete: too many open files|inotify_init1?: too many open files|fsnotify watcher: too many open files|watcher: too many open files)|(inotify_add_watch[^:\n]*:[^\n]*no space left on device)`)

// inotifyFailures is one component's failures of one limit on one node.
type inotifyFailures struct {
	node, comp, limit, text string
	lineRun
}

// runInotifyLimitReached reads the components' failures for want of
// inotify instances or watches, per node, component and limit.
func runInotifyLimitReached(p *analyzer.Pass) error {
	var groups []*inotifyFailures
	byKey := map[string]*inotifyFailures{}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		text := logText(le)
		if !strings.Contains(text, "too many open files") && !strings.Contains(text, "no space left on device") {
			continue
		}
		m := inotifyLineRe.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		limit := "fs.inotify.max_user_instances"
		if m[2] != "" {
			limit = "fs.inotify.max_user_watches"
		}
		comp := logComponent(le, "a component")
		if comp == "a component" && strings.Contains(m[1], "failed complete") {
			comp = "kube-proxy" // its options' Complete(), watching its configuration file
		}
		k := le.Node + "\x00" + comp + "\x00" + limit
		g := byKey[k]
		if g == nil {
			g = &inotifyFailures{node: le.Node, comp: comp, limit: limit, text: m[0]}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.add(le)
	}
	for _, g := range groups {
		p.Report(inotifyFinding(p, g))
	}
	return nil
}

// inotifyFinding words one component's failures, with the node's value
// of the limit when the bundle has it.
func inotifyFinding(p *analyzer.Pass, g *inotifyFailures) analyzer.Finding {
	who := g.comp + onNode(g.node)
	what := "inotify instances"
	if g.limit == "fs.inotify.max_user_watches" {
		what = "inotify watches"
	}
	then := "and fails where it needs one"
	if strings.Contains(strings.ToLower(g.comp), "proxy") {
		then = "and crash-loops: the node's Services, kube-dns's among them, get no rules and time out from its Pods"
	}
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "component", g.comp, "limit", g.limit),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts:     map[string]any{"lines": g.count, "component": g.comp, "limit": g.limit},
		Title:     fmt.Sprintf("%s cannot get %s: the node's %s is used up", who, what, g.limit),
		Summary: fmt.Sprintf("%s failed for want of %s (%q, %s), %s. The limit is the node's, shared by every "+
			"container whose processes run as the same user.", who, what, g.text, times(g.count), then),
		Supports: []string{fmt.Sprintf("%s: %s", g.first.Pos, g.text)},
		Cause: fmt.Sprintf("The %s of the node's user are used up (%s): many containers or several kind clusters on "+
			"one host hold them, and the limit is not per container.", what, g.limit),
		Alternatives: []string{"the process reached its own open-file limit (ulimit -n, a unit's LimitNOFILE)"},
		Fix: "Raise the limits on the node (for kind, on the host): sysctl -w fs.inotify.max_user_instances=512 " +
			"fs.inotify.max_user_watches=524288, kept in a file of /etc/sysctl.d; then restart what failed (for " +
			"kube-proxy, its Pods).",
		Decide: fmt.Sprintf("# on %s (for kind, the host): the inotify instances in use against the limits\n"+
			"sysctl fs.inotify.max_user_instances fs.inotify.max_user_watches; find /proc/*/fd -lname "+
			"anon_inode:inotify 2>/dev/null | wc -l", nodeName(g.node)),
		Evidence: g.evidence(what+" used up", "the last such line"),
	}
	if sc, ok := p.Snap.Sysctl(g.node, g.limit); ok {
		f.Facts["limit_value"] = sc.Value
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s = %s", sc.Pos, g.limit, sc.Value))
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: sc.Pos, Note: g.limit + " = " + sc.Value})
	}
	return f
}
