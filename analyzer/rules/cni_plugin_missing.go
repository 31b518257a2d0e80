package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/internal/shq"
	"github.com/netmortem/netmortem/model"
)

// CNIPluginMissing finds a CNI plugin the runtime cannot find on a node.
var CNIPluginMissing = &analyzer.Rule{
	Name:        "cni-plugin-missing",
	Severity:    analyzer.Warning,
	NeedsAny:    []model.Kind{model.KindLogs, model.KindKube},
	SubjectKeys: []string{"node", "plugin"},
	Run:         runCNIPluginMissing,
	Symptoms:    []analyzer.SymptomRef{PodsStuckCreating.At(115), ProbesTimeOut.At(115), DNSTimeouts.At(155)},
	Proof: "the runtime's own error that it did not find the plugin's binary in the directories it names (\"failed " +
		"to find plugin \\\"loopback\\\" in path [/opt/cni/bin]\"), in the kubelet's or the runtime's log or in a " +
		"Pod's FailedCreatePodSandBox event; why the binary is not there stays a likely cause, as the line names no " +
		"installer",
	Unproven: "which installer should have put the binary there (the primary CNI, the node's image, the cluster's " +
		"installer) and whether it is elsewhere on the node: `ls` of the directories and the CNI configuration decide",
	Doc: `a CNI plugin's binary is missing on the node

Every Pod sandbox's network is set up by the plugins the node's CNI
configuration (/etc/cni/net.d) chains: the primary CNI's own (calico,
flannel, cilium-cni) and the standard plugins it calls or chains (loopback,
bridge, host-local, portmap, bandwidth). The runtime looks for each as a
binary in its CNI directories (/opt/cni/bin, the kubelet's --cni-bin-dir
or containerd's bin_dir). When one is not there, every sandbox on the
node fails: "failed to find plugin \"loopback\" in path [/opt/cni/bin]",
in the kubelet's log and in each Pod's FailedCreatePodSandBox event. Pods
stay in ContainerCreating, CoreDNS with them, and sandboxes that cannot
be torn down pile up.

The binary is missing because nothing installed it (a primary CNI that
ships only its own plugin, as OVN-Kubernetes does not ship loopback; a
node image without the standard plugins; a CNI configuration naming a
plugin its image does not carry, as flannel 0.9.1's portmap), or because
it was installed elsewhere (k3s and RKE2 keep theirs under
/var/lib/rancher). An empty path ("in path []") is the kubelet started
without a CNI binary directory (kubernetes#62054, fixed in 1.11).

Evidence: the kubelet's, containerd's or CRI-O's log lines (their
message, or the err= and error= fields of structured lines), and the
FailedCreatePodSandBox or FailedSync events of kubectl describe pod or
kubectl get events, of a Pod sandbox (other libcni users, as podman, are
not the node's Pods); the first and the last per node and plugin. Lines
that only tear sandboxes down (after a CNI was replaced) are told so.

Severity: a warning of likely cause: the line proves the binary was not
in those directories, not who should have put it there.

Fix: install the standard CNI plugins (a containernetworking/plugins
release, or the distribution's kubernetes-cni package) into the directory
the runtime searches, or point the runtime's CNI directory at where they
are; for a plugin the CNI configuration names but no installer provides,
remove it from the configuration or install it.`,
}

// pluginMissingRe matches the runtime's error: the plugin and the
// directories it searched.
var pluginMissingRe = lazyre.New(`failed to find plugin \\?"([^"\\]+)\\?" in path \[([^\]]*)\]`)

// missingPlugin is what one node's lines say of one plugin.
type missingPlugin struct {
	node, plugin string
	dirs         []string // every path searched, in the order met
	first, last  model.Pos
	firstText    string
	count        int
	setup        bool // a line fails a sandbox's setup, not only its teardown
}

func runCNIPluginMissing(p *analyzer.Pass) error {
	var groups []*missingPlugin
	byKey := map[string]*missingPlugin{}
	note := func(node, text string, pos model.Pos, n int) {
		for _, m := range pluginMissingRe.FindAllStringSubmatch(text, -1) {
			k := node + "\x00" + m[1]
			g := byKey[k]
			if g == nil {
				g = &missingPlugin{node: node, plugin: m[1], first: pos,
					firstText: strings.ReplaceAll(m[0], `\"`, `"`)}
				byKey[k] = g
				groups = append(groups, g)
			}
			for _, d := range strings.Fields(m[2]) {
				if !slices.Contains(g.dirs, d) {
					g.dirs = append(g.dirs, d)
				}
			}
			g.last = pos
			g.count += max(n, 1)
			g.setup = g.setup || sandboxSetup(text)
		}
	}
	eachSandboxError(p, "failed to find plugin", func(e sandboxError) {
		if e.pod {
			note(e.node, e.text, e.pos, e.count)
		}
	})
	for _, g := range groups {
		p.Report(missingPluginFinding(g))
	}
	return nil
}

// missingPluginFinding words what one node's lines say of one plugin.
func missingPluginFinding(g *missingPlugin) analyzer.Finding {
	dirs := g.dirs
	where := "[" + strings.Join(dirs, " ") + "]"
	often := times(g.count)
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "plugin", g.plugin),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts:     map[string]any{"plugin": g.plugin, "path": dirs, "failures": g.count},
		Title:     fmt.Sprintf("CNI plugin %s is missing on %s: not in %s", g.plugin, nodeName(g.node), where),
		Summary: fmt.Sprintf("The runtime on %s did not find the CNI plugin %s in %s (%s): every Pod sandbox whose "+
			"network the CNI configuration chains through %s fails to start, and its Pods stay in ContainerCreating.",
			nodeName(g.node), g.plugin, where, often, g.plugin),
		Supports: []string{fmt.Sprintf("%s: %s", g.first, g.firstText)},
		Cause: fmt.Sprintf("The %s binary is not in the directories the runtime searches: nothing installed it (the "+
			"primary CNI ships only its own plugin; the node's image lacks the standard plugins; the CNI "+
			"configuration names a plugin its image does not carry), or it was installed into another directory.",
			g.plugin),
		Alternatives: []string{"the binary is installed in another directory than the runtime's CNI directory " +
			"(k3s and RKE2 keep theirs under /var/lib/rancher)", "the CNI configuration on the node is not the " +
			"cluster CNI's (a runtime's default config in /etc/cni/net.d sorting first)"},
		Fix: fmt.Sprintf("Install the standard CNI plugins (a containernetworking/plugins release, or the "+
			"distribution's kubernetes-cni package) into the runtime's CNI directory (%s), or point that directory at "+
			"where %s is; if no installer provides %s, remove it from the CNI configuration.", strings.Join(dirs, " or "),
			g.plugin, g.plugin),
		Evidence: []analyzer.Evidence{{Pos: g.first, Note: "plugin " + g.plugin + " not found"}},
	}
	if g.last != g.first {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.last, Note: "the last"})
	}
	if !g.setup {
		// Only sandboxes being torn down: those set up before the
		// plugin went (a CNI replaced, its configuration left behind).
		f.Summary = fmt.Sprintf("The runtime on %s did not find the CNI plugin %s in %s (%s) while tearing Pod "+
			"sandboxes down: they cannot be removed, and their addresses and interfaces stay; no line shows a "+
			"sandbox failing to start.", nodeName(g.node), g.plugin, where, often)
		f.Alternatives = append(f.Alternatives, "the CNI was replaced: sandboxes of the old one are torn down "+
			"through a plugin no longer installed")
	}
	list := "ls -l " + strings.Join(quoteAll(dirs), " ")
	if len(dirs) == 0 {
		list = "ls -l /opt/cni/bin"
		f.Title = fmt.Sprintf("CNI plugin %s is missing on %s: the runtime searched no directory", g.plugin, nodeName(g.node))
		f.Cause = "The kubelet was started without a CNI binary directory (its --cni-bin-dir unset, which " +
			"Kubernetes before 1.11 did not default: kubernetes#62054), so it finds no plugin."
		f.Alternatives = []string{"the runtime's own CNI configuration names no binary directory"}
		f.Fix = "Start the kubelet with --cni-bin-dir=/opt/cni/bin (or upgrade it), or set the runtime's bin_dir."
	}
	f.Decide = fmt.Sprintf("# on %s: the plugins there, beside those the CNI configuration chains (\"type\")\n%s\n"+
		"grep -h '\"type\"' /etc/cni/net.d/*", nodeName(g.node), list)
	return f
}

// quoteAll quotes each of words for a shell.
func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shq.Quote(w)
	}
	return out
}
