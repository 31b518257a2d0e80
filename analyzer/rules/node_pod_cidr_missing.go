package rules

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// NodePodCIDRMissing finds flannel unable to start on a node that has no
// Pod CIDR, and the sandboxes that fail for want of its subnet file.
var NodePodCIDRMissing = &analyzer.Rule{
	Name:        "node-pod-cidr-missing",
	Severity:    analyzer.Warning,
	NeedsAny:    []model.Kind{model.KindLogs, model.KindKube},
	Uses:        []model.Kind{model.KindComponents},
	SubjectKeys: []string{"node"},
	Run:         runNodePodCIDRMissing,
	Symptoms:    []analyzer.SymptomRef{PodsStuckCreating.At(117), DNSTimeouts.At(157)},
	Proof: "flannel's own line that the node has no Pod CIDR (\"failed to acquire lease: node \\\"worker-1\\\" pod cidr " +
		"not assigned\"), and what the bundle shows of why: kube-controller-manager's flags, the Node's spec.podCIDR, " +
		"a CIDRNotAvailable event",
	Unproven: "from the sandboxes' \"open /run/flannel/subnet.env: no such file or directory\" alone, why flannel " +
		"wrote no subnet file on the node: its log and the Node's spec.podCIDR decide",
	Doc: `flannel cannot start on a node that has no Pod CIDR

flannel in its default mode (the Kubernetes subnet manager) takes each
node's subnet from the Node's spec.podCIDR, which kube-controller-manager
fills in when it runs with --allocate-node-cidrs=true and
--cluster-cidr. Without one, flanneld logs "failed to acquire lease: node
\"worker-1\" pod cidr not assigned" and exits, and never writes
/run/flannel/subnet.env; every Pod sandbox on the node then fails with
"open /run/flannel/subnet.env: no such file or directory", and its Pods
stay in ContainerCreating.

A node has no Pod CIDR because kube-controller-manager does not allocate
them (kubeadm init without --pod-network-cidr leaves both flags out),
because the cluster range is used up (the Node's CIDRNotAvailable event:
a /16 holds 256 nodes' /24s), or because the Node object was deleted and
registered again and the allocation has not caught up.

Evidence: flanneld's line (it names its node), the sandboxes' subnet.env
errors in the kubelet's and runtimes' logs and events, the Nodes'
spec.podCIDR and the kubelet's own "Updating Pod CIDR" line,
CIDRNotAvailable events, kube-controller-manager's line that the range
has "no remaining CIDRs left to allocate", and its flags (its static Pod
manifest or command line).

Severity: a warning of likely cause from flannel's line; the flags, the
event, kube-controller-manager's line or the Node object name which
cause. The subnet.env errors alone
are of unknown cause: flanneld may not be running on the node for
another reason (not scheduled there, crash-looping on its own error, or
not started yet); on a node whose kubelet says it has its Pod CIDR they
are not this rule's.

Fix: give kube-controller-manager --allocate-node-cidrs=true and
--cluster-cidr=<the CNI's network, 10.244.0.0/16 for flannel> (kubeadm:
networking.podSubnet), or set spec.podCIDR on the Node by hand; for an
exhausted range, a wider --cluster-cidr or a longer --node-cidr-mask-size;
then restart the node's flannel Pod.`,
}

var (
	// leaseNoCIDRRe is flanneld's line: the node it runs for.
	leaseNoCIDRRe = lazyre.New(`failed to acquire lease: node "?([^"\s]+)"? pod cidr not assigned`)
	// subnetEnvMissingRe is the flannel CNI plugin's error, the file
	// flanneld writes not there.
	subnetEnvMissingRe = lazyre.New(`open /run/flannel/subnet\.env: no such file or directory`)
	// cidrNotAvailableRe is the node controller's event that the range has
	// no CIDR left for a node.
	cidrNotAvailableRe = lazyre.New(`(?i)CIDRNotAvailable|no remaining CIDRs left to allocate`)
)

// noPodCIDR is what the bundle says of one node.
type noPodCIDR struct {
	node              string
	lease             *model.LogEvent // flanneld's first line
	leaseN            int
	subnetAt          model.Pos // the first sandbox's subnet.env error
	subnetN           int
	notAvailable      *model.Event
	exhausted         model.Pos // kube-controller-manager's line that the range is used up
	podCIDR           string    // the Node's spec.podCIDR, when listed
	nodeAt            model.Pos
	nodeListed        bool
	managerAt         model.Pos // kube-controller-manager's command line
	allocate, hasCIDR bool      // its --allocate-node-cidrs=true, --cluster-cidr
	managerListed     bool
	othersHave        bool   // another listed Node has a Pod CIDR
	allocates         string // what shows kube-controller-manager allocates
	kubeletCIDR       string // the Pod CIDR the node's kubelet says it got
	kubeletAt         model.Pos
}

func runNodePodCIDRMissing(p *analyzer.Pass) error {
	var groups []*noPodCIDR
	byNode := map[string]*noPodCIDR{}
	get := func(n string) *noPodCIDR {
		g := byNode[n]
		if g == nil {
			g = &noPodCIDR{node: n}
			byNode[n] = g
			groups = append(groups, g)
		}
		return g
	}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		m := leaseNoCIDRRe.FindStringSubmatch(le.Message)
		if m == nil {
			continue
		}
		g := get(m[1])
		if g.lease == nil {
			g.lease = le
		}
		g.leaseN++
	}
	eachSandboxError(p, "subnet.env", func(e sandboxError) {
		if !subnetEnvMissingRe.MatchString(e.text) {
			return
		}
		node := e.node
		if node == "" && len(groups) == 1 && groups[0].lease != nil {
			node = groups[0].node // a ticket of one node: the sandboxes are flannel's node's
		}
		g := get(node)
		if g.subnetN == 0 {
			g.subnetAt = e.pos
		}
		g.subnetN += e.count
	})
	if len(groups) == 0 {
		return nil
	}
	for i := range p.Snap.Logs {
		// The kubelet's own line that its Node has a Pod CIDR
		// (kubelet_network.go).
		le := &p.Snap.Logs[i]
		cidr := le.Fields["newPodCIDR"]
		if g := byNode[le.Node]; g != nil && cidr != "" && g.kubeletCIDR == "" &&
			strings.HasPrefix(le.Message, "Updating Pod CIDR") {
			g.kubeletCIDR, g.kubeletAt = cidr, le.Pos
		}
	}
	for i := range p.Snap.Kube.Events {
		e := &p.Snap.Kube.Events[i]
		if !cidrNotAvailableRe.MatchString(e.Message + " " + e.Reason) {
			continue
		}
		if g := byNode[e.InvolvedObject.Name]; g != nil && g.notAvailable == nil {
			g.notAvailable = e
		}
	}
	for i := range p.Snap.Logs {
		// kube-controller-manager's own line that the range is used up
		// (it names no node: every node left without a CIDR is one).
		le := &p.Snap.Logs[i]
		if !strings.Contains(le.Message, "no remaining CIDRs left to allocate") {
			continue
		}
		for _, g := range groups {
			if g.exhausted.File == "" {
				g.exhausted = le.Pos
			}
		}
		break
	}
	for i := range p.Snap.Kube.Nodes {
		n := &p.Snap.Kube.Nodes[i]
		if g := byNode[n.Name]; g != nil {
			g.podCIDR, g.nodeAt, g.nodeListed = n.Spec.PodCIDR, n.Source.Pos, true
			continue
		}
		if n.Spec.PodCIDR != "" {
			for _, g := range groups {
				if !g.othersHave {
					g.othersHave, g.allocates = true, "Node "+n.Name+" has "+n.Spec.PodCIDR
				}
			}
		}
	}
	for i := range p.Snap.Components {
		c := &p.Snap.Components[i]
		if c.Name != "kube-controller-manager" {
			continue
		}
		a, _ := c.Flag("allocate-node-cidrs")
		cidr, hasCIDR := c.Flag("cluster-cidr")
		for _, g := range groups {
			g.managerAt, g.managerListed = c.Pos, true
			g.allocate, g.hasCIDR = a.Value == "true", hasCIDR && cidr.Value != ""
			g.allocates = "its flags"
		}
	}
	for _, g := range groups {
		if g.lease == nil && g.kubeletCIDR != "" {
			// The sandboxes' errors alone, on a node whose kubelet has its
			// Pod CIDR: flannel not running there yet, or failing for
			// another reason, which this rule does not name.
			continue
		}
		p.Report(noPodCIDRFinding(g))
	}
	return nil
}

// noPodCIDRFinding judges what the bundle says of one node.
func noPodCIDRFinding(g *noPodCIDR) analyzer.Finding {
	node := nodeName(g.node)
	f := analyzer.Finding{
		Subject:   subject("node", g.node),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts:     map[string]any{"flannel_lines": g.leaseN, "sandbox_failures": g.subnetN},
		Decide: fmt.Sprintf("kubectl get node %s -o jsonpath='{.spec.podCIDR}'; "+
			"kubectl -n kube-system get pod -l component=kube-controller-manager -o yaml | grep -e allocate-node-cidrs -e cluster-cidr",
			cmp.Or(g.node, "NODE")),
	}
	if g.subnetN > 0 {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.subnetAt, Note: "/run/flannel/subnet.env missing"})
	}
	if g.lease == nil {
		// The sandboxes' errors alone.
		f.Certainty = analyzer.Unknown
		f.Title = fmt.Sprintf("flannel wrote no subnet file on %s: Pod sandboxes fail", node)
		f.Summary = fmt.Sprintf("Pod sandboxes on %s fail (%s): /run/flannel/subnet.env, which flanneld writes "+
			"once it has the node's subnet, is not there. Why is not shown: the node has no Pod CIDR, flanneld is "+
			"not running on it (not scheduled, crash-looping, not started yet), or it fails for another reason.",
			node, times(g.subnetN))
		f.Decide = fmt.Sprintf("kubectl get node %s -o jsonpath='{.spec.podCIDR}'; "+
			"kubectl get pods -A -o wide | grep flannel; kubectl -n kube-flannel logs POD --tail 20",
			cmp.Or(g.node, "NODE"))
		return f
	}
	f.Evidence = append([]analyzer.Evidence{{Pos: g.lease.Pos, Note: "flannel: pod cidr not assigned"}}, f.Evidence...)
	f.Supports = []string{fmt.Sprintf("%s: %s", g.lease.Pos, firstLine(strings.Trim(g.lease.Message, "* ")))}
	f.Title = fmt.Sprintf("flannel cannot start on %s: the node has no Pod CIDR", node)
	f.Summary = fmt.Sprintf("flanneld on %s found no spec.podCIDR on its Node (%s), so it takes no subnet, writes no "+
		"/run/flannel/subnet.env, and every Pod sandbox on the node fails to set up its network.", node,
		times(g.leaseN))
	f.Cause = fmt.Sprintf("%s has no spec.podCIDR, which flannel's subnet manager takes the node's subnet from. Why "+
		"is not shown: kube-controller-manager allocating none (without --allocate-node-cidrs=true and "+
		"--cluster-cidr, as kubeadm init without --pod-network-cidr leaves it), the cluster range used up, or the "+
		"Node registered again.", node)
	f.Fix = "If kube-controller-manager lacks them, give it --allocate-node-cidrs=true and --cluster-cidr=10.244.0.0/16 " +
		"(flannel's network; kubeadm: networking.podSubnet); else look for the Node's CIDRNotAvailable event or set " +
		"its spec.podCIDR; then restart flannel on the node."
	switch {
	case g.nodeListed && g.podCIDR != "":
		f.Certainty = analyzer.Unknown
		f.Cause, f.Alternatives, f.Fix = "", nil, ""
		f.Summary += fmt.Sprintf(" The Node listed has spec.podCIDR %s: the lines are older than the listing, or "+
			"flanneld asked for another node's name.", g.podCIDR)
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.nodeAt, Note: "spec.podCIDR " + g.podCIDR})
	case g.kubeletCIDR != "":
		f.Certainty = analyzer.Unknown
		f.Cause, f.Alternatives, f.Fix = "", nil, ""
		f.Summary += fmt.Sprintf(" The node's kubelet says it has Pod CIDR %s: flannel's lines are older than "+
			"that, or flanneld asked for another node's name.", g.kubeletCIDR)
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.kubeletAt, Note: "kubelet: Pod CIDR " + g.kubeletCIDR})
	case g.notAvailable != nil:
		f.Cause = "The cluster range has no Pod CIDR left for the node (its CIDRNotAvailable event): every node " +
			"subnet of --cluster-cidr is taken."
		f.Alternatives = []string{"CIDRs of Nodes deleted long ago are still held"}
		f.Fix = "Widen kube-controller-manager's --cluster-cidr (and the CNI's network with it) or lengthen " +
			"--node-cidr-mask-size, then restart flannel on the node."
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.notAvailable.Source.Pos, Note: "CIDRNotAvailable"})
	case g.exhausted.File != "":
		f.Cause = "The cluster range has no Pod CIDR left for the node: kube-controller-manager says there are no " +
			"remaining CIDRs in --cluster-cidr to allocate."
		f.Alternatives = []string{"CIDRs of Nodes deleted long ago are still held"}
		f.Fix = "Widen kube-controller-manager's --cluster-cidr (and the CNI's network with it) or lengthen " +
			"--node-cidr-mask-size, then restart flannel on the node."
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.exhausted, Note: "no remaining CIDRs left to allocate"})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: kube-controller-manager: CIDR allocation failed; there are "+
			"no remaining CIDRs left to allocate in the accepted range", g.exhausted))
	case g.managerListed && (!g.allocate || !g.hasCIDR):
		f.Cause = "kube-controller-manager runs without --allocate-node-cidrs=true and --cluster-cidr, so it " +
			"allocates no Pod CIDRs (as kubeadm init without --pod-network-cidr leaves it)."
		f.Fix = "Give kube-controller-manager --allocate-node-cidrs=true and --cluster-cidr=10.244.0.0/16 (flannel's " +
			"network; kubeadm: networking.podSubnet), then restart flannel on the node."
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.managerAt, Note: "kube-controller-manager allocates no CIDRs"})
	case g.managerListed || g.othersHave:
		f.Cause = "The Node has no Pod CIDR though kube-controller-manager allocates them (" + g.allocates + "): " +
			"it was registered again and has none yet, or the range is used up."
		f.Fix = "Look for the Node's CIDRNotAvailable event (kubectl describe node); set spec.podCIDR by hand, or " +
			"widen the range; then restart flannel on the node."
	case g.nodeListed:
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.nodeAt, Note: "no spec.podCIDR"})
	}
	return f
}
