package rules

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// PortForwardSocatMissing finds kubectl port-forward failing because the
// Pod's node has no socat.
var PortForwardSocatMissing = &analyzer.Rule{
	Name:        "port-forward-socat-missing",
	Severity:    analyzer.Warning,
	NeedsAny:    []model.Kind{model.KindLogs},
	Uses:        []model.Kind{model.KindKube},
	SubjectKeys: []string{"node", "pod", "sandbox"},
	Run:         runPortForwardSocatMissing,
	Symptoms:    []analyzer.SymptomRef{PodStreamsFail.At(10)},
	Proof: "the node's own error, relayed to kubectl (\"error forwarding port 3000 to pod web-6d4cf_default, uid : " +
		"unable to do port forwarding: socat not found\") or in the kubelet's or containerd's log (\"failed to find " +
		"socat\"); the Pod's node from a Pod listing, when the bundle has one",
	Unproven: "whether socat is missing from the node or only from the kubelet's PATH: `command -v socat` on the node decides",
	Doc: `kubectl port-forward fails: the Pod's node has no socat

kubectl port-forward streams a local port through the apiserver to the
kubelet of the Pod's node, which connects to the Pod's port inside its
network namespace. The Docker runtime (dockershim, before Kubernetes
1.24), containerd's CRI before 1.3 and CRI-O before 1.16 do that by
running socat (and nsenter) on the node. Without socat, the forward
listens, and every connection through it fails at once: kubectl prints
"an error occurred forwarding 8080 -> 3000: error forwarding port 3000
to pod web-6d4cf_default, uid : unable to do port forwarding: socat not
found." (and "lost connection to pod"); helm 2, which reaches tiller
the same way, says "transport is closing".

Node images without socat: CoreOS Container Linux, minimal cloud
images, nodes installed by hand (Kubernetes the Hard Way).

Evidence: the error as kubectl (or oc, helm) logs it, or the kubelet's,
containerd's or CRI-O's own line; the first and the last per Pod. The
Pod's node comes from a Pod listing of the bundle.

Severity: a warning of likely cause: the line says the runtime did not
find socat, not whether it is missing from the node or from the
kubelet's PATH.

Fix: install socat on the node (apt-get install socat, yum install
socat; on CoreOS, a runtime that needs no socat); newer runtimes
forward in-process and need none.`,
}

var (
	// socatMissingRe is the runtime's error: dockershim's and CRI-O's
	// "unable to do port forwarding: socat not found", containerd's
	// "failed to find socat".
	socatMissingRe = lazyre.New(`(?i)unable to do port forwarding: socat not found|failed to find socat\b`)
	// forwardPodRe is the Pod the error names: "to pod NAME_NAMESPACE,".
	forwardPodRe = lazyre.New(`(?i)to pod ([a-z0-9][a-z0-9.-]*)_([a-z0-9][a-z0-9-]*)\b`)
	// forwardSandboxRe is the sandbox a CRI runtime's error names by its
	// ID: "to pod 0c4f6e1d...,".
	forwardSandboxRe = lazyre.New(`(?i)to pod ([0-9a-f]{64})\b`)
	// forwardPortsRe is kubectl's "forwarding 8080 -> 3000".
	forwardPortsRe = lazyre.New(`(?i)forwarding (\d+) -> (\d+)`)
)

// socatMissing is what the lines say of one Pod (or one node's runtime).
type socatMissing struct {
	node, ns, pod string
	sandbox       string // the sandbox's ID, when the error names no Pod
	ports         string // "8080 -> 3000", as kubectl gives them
	first, last   model.Pos
	firstText     string
	count         int
}

func runPortForwardSocatMissing(p *analyzer.Pass) error {
	var groups []*socatMissing
	byKey := map[string]*socatMissing{}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		text := le.Message
		if v := le.Fields["err"]; v != "" {
			text += " " + v
		}
		m := socatMissingRe.FindString(text)
		if m == "" {
			continue
		}
		var ns, pod, sandbox string
		if pm := forwardPodRe.FindStringSubmatch(text); pm != nil {
			pod, ns = pm[1], pm[2]
		} else if sm := forwardSandboxRe.FindStringSubmatch(text); sm != nil {
			sandbox = sm[1][:12]
		}
		node := ""
		if pod == "" {
			node = le.Node // the runtime's own line: its node
		}
		k := node + "\x00" + ns + "/" + pod + "\x00" + sandbox
		g := byKey[k]
		if g == nil {
			g = &socatMissing{node: node, ns: ns, pod: pod, sandbox: sandbox, first: le.Pos, firstText: firstLine(strings.TrimSpace(text))}
			if pm := forwardPortsRe.FindStringSubmatch(text); pm != nil {
				g.ports = pm[1] + " -> " + pm[2]
			}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.last = le.Pos
		g.count++
	}
	for _, g := range groups {
		var at *model.Pod
		if g.pod != "" {
			at = podNamed(p.Snap, g.ns, g.pod)
			if at != nil && at.Spec.NodeName != "" {
				g.node = at.Spec.NodeName
			}
		}
		p.Report(socatMissingFinding(g, at))
	}
	return nil
}

// podNamed returns the Pod of the snapshot called ns/name, or nil.
func podNamed(s *model.Snapshot, ns, name string) *model.Pod {
	for i := range s.Kube.Pods {
		if pod := &s.Kube.Pods[i]; pod.Name == name && (pod.Namespace == ns || pod.Namespace == "") {
			return pod
		}
	}
	return nil
}

// socatMissingFinding words what the lines say of one Pod, whose listing
// (at, nil when the bundle has none) gives its node.
func socatMissingFinding(g *socatMissing, at *model.Pod) analyzer.Finding {
	node := "the Pod's node"
	if g.node != "" {
		node = g.node
	}
	what := "Port forwarding"
	if g.sandbox != "" {
		what = "Port forwarding to sandbox " + g.sandbox
	}
	if g.pod != "" {
		what = "kubectl port-forward to " + objectName(g.ns, g.pod)
		if g.ports != "" {
			what += " (" + g.ports + ")"
		}
	}
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "pod", objectName(g.ns, g.pod), "sandbox", g.sandbox),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts:     map[string]any{"failures": g.count},
		Title:     fmt.Sprintf("%s fails: %s has no socat", what, node),
		Summary: fmt.Sprintf("%s failed %s: the container runtime on %s forwards a port by running socat, and did "+
			"not find it, so every connection through the forward fails at once.", what,
			times(g.count), node),
		Supports: []string{fmt.Sprintf("%s: %s", g.first, g.firstText)},
		Cause: fmt.Sprintf("socat is not installed on %s (or not in the kubelet's PATH), and its runtime (the Docker "+
			"runtime, or containerd or CRI-O of before 2019) needs it to forward ports.", node),
		Alternatives: []string{"socat is installed in a directory the kubelet's PATH does not hold"},
		Fix: fmt.Sprintf("Install socat on %s (apt-get install socat, yum install socat), or move the node to a "+
			"runtime that forwards ports without it (containerd 1.3 or later, CRI-O 1.16 or later).", node),
		Evidence: []analyzer.Evidence{{Pos: g.first, Note: "socat not found"}},
		Decide:   fmt.Sprintf("# on %s\ncommand -v socat || echo no socat", node),
	}
	if g.last != g.first {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.last, Note: "the last"})
	}
	if at != nil && at.Spec.NodeName != "" {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: at.Source.Pos, Note: "the Pod runs on " + at.Spec.NodeName})
		f.Facts["node"] = at.Spec.NodeName
	}
	if g.node == "" {
		f.Decide = "# on the Pod's node (kubectl get pod -o wide names it)\ncommand -v socat || echo no socat"
	}
	return f
}
