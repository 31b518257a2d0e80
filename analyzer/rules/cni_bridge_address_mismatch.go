package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/internal/shq"
	"github.com/netmortem/netmortem/model"
)

// CNIBridgeAddressMismatch finds a node's CNI bridge holding another
// address than the one the bridge plugin gives it.
var CNIBridgeAddressMismatch = &analyzer.Rule{
	Name:        "cni-bridge-address-mismatch",
	Severity:    analyzer.Warning,
	NeedsAny:    []model.Kind{model.KindLogs, model.KindKube},
	Uses:        []model.Kind{model.KindAddrs},
	SubjectKeys: []string{"node", "bridge"},
	Run:         runCNIBridgeAddressMismatch,
	Symptoms:    []analyzer.SymptomRef{PodsStuckCreating.At(116), ProbesTimeOut.At(116), DNSTimeouts.At(156)},
	Proof: "the bridge plugin's own error that the bridge already has another address than the gateway it sets " +
		"(\"failed to set bridge addr: \\\"cni0\\\" already has an IP address different from 10.244.1.1/24\"), in the " +
		"kubelet's or the runtime's log or in a Pod's FailedCreatePodSandBox event, and the bridge's address in an " +
		"`ip addr` of the node when the bundle has one",
	Unproven: "where the other address came from (an earlier Pod subnet of the node, another CNI configuration " +
		"using the same bridge): `ip addr show` of the bridge beside the node's Pod subnet decides",
	Doc: `a CNI bridge holds an address from another Pod subnet

The bridge CNI plugin (flannel's default delegate, and containerd's
own default network) puts each Pod's veth on a bridge of the node (cni0)
and gives the bridge the gateway address of the node's Pod subnet
(10.244.1.1/24). When the bridge already holds another IPv4 address, it
refuses: "failed to set bridge addr: \"cni0\" already has an IP address
different from 10.244.1.1/24". Every Pod sandbox on the node fails to
start, and its Pods stay in ContainerCreating.

The bridge outlives what gave it its address: a node reset and joined
again (kubeadm reset does not delete cni0), or given another Pod subnet
(its Node object deleted and registered again, flannel's lease lost),
keeps the old gateway on cni0. Another CNI configuration naming the same
bridge with another subnet fights over it the same way: a container
runtime's default conflist (containerd's or CRI-O's, 10.88.0.0/16) beside
flannel's, which the runtime reads first when its name sorts first.

Evidence: the bridge plugin's line, in the kubelet's, containerd's or
CRI-O's log or in FailedCreatePodSandBox events (a line of another
program counts for cni0 alone, and never podman's, buildah's or
nerdctl's), or quoted alone; the first and the last per node and bridge.
An ` + "`ip addr`" + ` of the node shows the address the bridge holds (of one
that names no node, only when one node's lines fail): a gateway of the
cluster's Pod range other than the one expected is the node's earlier
subnet; the runtimes' 10.88.0.0/16, their default configuration; the
cluster's gateway where the plugin wants 10.88.0.1/16, the default
configuration read before the cluster CNI's. For an IPv6 gateway only
addresses overlapping it count: the plugin keeps others.

Severity: a warning of likely cause: the line proves the bridge holds
another address, not where it came from. When the node's listing shows
the bridge with the expected address, the lines are older than the
listing (the bridge was mended), and the cause is left unknown.

Fix: delete the bridge (` + "`ip link set cni0 down; ip link delete cni0`" + `,
or reboot the node) so the plugin makes it again with the right address;
remove a second CNI configuration that names the same bridge; delete cni0
whenever a node is reset.`,
}

// bridgeAddrRe matches the bridge plugin's error: the bridge and the
// gateway it would give it (with its prefix length). The quotes may come
// escaped, once or more, inside a structured line's field, or typeset
// (“cni0”) in a quote; the words before them may be left out.
var bridgeAddrRe = lazyre.New(`(?i)(?:failed to set bridge addr: )?\\*["“]([^"“”\\\s]+)\\*["”] already has an IP address different from ([0-9a-fA-F.:]+(?:/\d+)?)`)

// otherBridgeUser reports whether a line of source src (its program, file
// and container) fails another bridge program's network, not a Pod's:
// podman's, buildah's, nerdctl's, or a bridge of theirs.
func otherBridgeUser(src, bridge string) bool {
	src = strings.ToLower(src)
	for _, p := range []string{"podman", "buildah", "nerdctl"} {
		if strings.Contains(src, p) || strings.HasPrefix(bridge, p) || strings.HasPrefix(bridge, "cni-"+p) {
			return true
		}
	}
	return false
}

// bridgeMismatch is what one node's lines say of one bridge.
type bridgeMismatch struct {
	node, bridge string
	wants        []string // the gateways the plugin would set, in the order met
	first, last  model.Pos
	firstText    string
	count        int
	flannel      bool // a line names flannel (its CNI plugin delegates to bridge)
	nodes        int  // how many nodes' lines fail this bridge (set after the walk)
}

func runCNIBridgeAddressMismatch(p *analyzer.Pass) error {
	var groups []*bridgeMismatch
	byKey := map[string]*bridgeMismatch{}
	eachSandboxError(p, "already has an IP address different from", func(e sandboxError) {
		for _, m := range bridgeAddrRe.FindAllStringSubmatch(e.text, -1) {
			if !e.pod && m[1] != "cni0" || otherBridgeUser(e.src, m[1]) {
				continue // another libcni user's bridge (podman's cni-podman0)
			}
			k := e.node + "\x00" + m[1]
			g := byKey[k]
			if g == nil {
				g = &bridgeMismatch{node: e.node, bridge: m[1], first: e.pos,
					firstText: strings.ReplaceAll(m[0], `\"`, `"`)}
				byKey[k] = g
				groups = append(groups, g)
			}
			if !slices.Contains(g.wants, m[2]) {
				g.wants = append(g.wants, m[2])
			}
			g.last = e.pos
			g.count += e.count
			g.flannel = g.flannel || strings.Contains(strings.ToLower(e.text), "flannel")
		}
	})
	for _, g := range groups {
		for _, o := range groups {
			if o.bridge == g.bridge {
				g.nodes++
			}
		}
	}
	for _, g := range groups {
		p.Report(bridgeMismatchFinding(g, bridgeHolds(p.Snap, g)))
	}
	return nil
}

// bridgeHolds returns the addresses of the family the plugin sets that
// the snapshot's `ip addr` listings show on g's bridge on g's node; when
// none names the node, those of one listing that names no node (a ticket's
// paste of the node's `ip addr` beside its kubelet's journal).
func bridgeHolds(s *model.Snapshot, g *bridgeMismatch) []model.IfAddr {
	want, err := netip.ParsePrefix(g.wants[0])
	if err != nil {
		if a, err := netip.ParseAddr(g.wants[0]); err == nil {
			want = netip.PrefixFrom(a, a.BitLen())
		}
	}
	var named, unnamed []model.IfAddr
	for _, a := range s.Addrs {
		if a.Dev != g.bridge || !a.Prefix.IsValid() || a.Prefix.Addr().Is4() != want.Addr().Is4() ||
			a.Prefix.Addr().IsLinkLocalUnicast() {
			continue
		}
		if want.Addr().Is6() && !a.Prefix.Overlaps(want) {
			continue // the plugin keeps IPv6 addresses of other subnets
		}
		switch a.Node {
		case g.node:
			named = append(named, a)
		case "":
			unnamed = append(unnamed, a)
		}
	}
	if len(named) > 0 || len(unnamed) == 0 || g.nodes > 1 {
		return named // a listing of no node is one node's, not to be told apart when several nodes fail
	}
	for _, a := range unnamed {
		if a.Pos.File != unnamed[0].Pos.File {
			return nil // several nodes' listings, none named
		}
	}
	return unnamed
}

// bridgeMismatchFinding words what one node's lines say of one bridge,
// and what its listing shows of the bridge's addresses.
func bridgeMismatchFinding(g *bridgeMismatch, holds []model.IfAddr) analyzer.Finding {
	node, want := nodeName(g.node), strings.Join(g.wants, " or ")
	at := "On " + node
	if g.node == "" {
		at = "On the node"
	}
	often := times(g.count)
	runtimeDefault := "a container runtime's default CNI configuration (containerd's 10-containerd-net.conflist, " +
		"CRI-O's 100-crio-bridge.conf: bridge cni0, 10.88.0.0/16)"
	family, list := "-4", "ls /etc/cni/net.d"
	if strings.Contains(g.wants[0], ":") {
		family = "-6"
	}
	if g.flannel {
		list = "cat /run/flannel/subnet.env; " + list
	}
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "bridge", g.bridge),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts:     map[string]any{"bridge": g.bridge, "expected": g.wants, "failures": g.count},
		Title:     fmt.Sprintf("CNI bridge %s%s holds another address than %s", g.bridge, onNode(g.node), want),
		Summary: fmt.Sprintf("The bridge plugin%s refused to set up Pod sandboxes (%s): %s already holds an "+
			"address other than the gateway %s it gives the bridge, so every Pod it sets up there stays in "+
			"ContainerCreating.", onNode(g.node), often, g.bridge, want),
		Supports: []string{fmt.Sprintf("%s: %s", g.first, g.firstText)},
		Cause: fmt.Sprintf("%s kept the gateway of an earlier Pod subnet of the node: the node was reset and joined "+
			"again, or given another Pod subnet, and the bridge was not deleted.", g.bridge),
		Alternatives: []string{"another CNI configuration on the node names the same bridge with another subnet " +
			"(" + runtimeDefault + " beside the cluster's CNI)"},
		Fix: fmt.Sprintf("%s: `ip link set %s down; ip link delete %s` (or reboot), so the plugin makes the "+
			"bridge again with %s; delete %s whenever the node is reset.", at, g.bridge, g.bridge, want, g.bridge),
		Evidence: []analyzer.Evidence{{Pos: g.first, Note: g.bridge + " holds another address"}},
		Decide: fmt.Sprintf("# on %s: the bridge's addresses, beside the CNI configurations the runtime reads\n"+
			"ip %s addr show dev %s\n%s", node, family, shq.Quote(g.bridge), list),
	}
	if g.last != g.first {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: g.last, Note: "the last"})
	}
	wantsDefault := strings.HasPrefix(g.wants[0], "10.88.")
	if wantsDefault {
		// The plugin failing is the runtime default network's: it may be
		// the network the node is meant to use (a CI host), or a default
		// configuration read before the cluster CNI's.
		f.Alternatives = []string{runtimeDefault + " is read before the cluster CNI's, and finds the bridge " +
			"holding the cluster CNI's gateway"}
		f.Fix = fmt.Sprintf("%s: if /etc/cni/net.d holds a runtime's default configuration beside the cluster "+
			"CNI's, remove it; if 10.88.0.0/16 is the network meant, `ip link delete %s` so the plugin makes it again.",
			at, g.bridge)
	}
	if len(holds) == 0 {
		return f
	}
	var listed []string
	mended := false
	for _, a := range holds {
		listed = append(listed, a.Prefix.String())
		mended = mended || slices.Contains(g.wants, a.Prefix.String())
	}
	f.Facts["holds"] = listed
	f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: holds[0].Pos, Note: g.bridge + " " + holds[0].Prefix.String()})
	if mended {
		f.Certainty = analyzer.Unknown
		f.Title = fmt.Sprintf("CNI bridge %s%s refused %s, which it holds now", g.bridge, onNode(g.node), want)
		f.Summary += fmt.Sprintf(" The node's listing shows %s with %s: the bridge was mended after the lines, or the "+
			"listing was taken at another time.", g.bridge, strings.Join(listed, ", "))
		f.Cause, f.Alternatives, f.Fix = "", nil, ""
		return f
	}
	f.Title = fmt.Sprintf("CNI bridge %s%s holds %s, not %s", g.bridge, onNode(g.node), strings.Join(listed, ", "), want)
	f.Summary += fmt.Sprintf(" The node's listing shows %s with %s.", g.bridge, strings.Join(listed, ", "))
	holdsDefault := defaultNet.Contains(holds[0].Prefix.Addr())
	switch {
	case holdsDefault && !wantsDefault:
		f.Cause = fmt.Sprintf("%s set %s on the bridge the cluster's CNI uses.", capitalFirst(runtimeDefault),
			holds[0].Prefix)
		f.Alternatives = []string{fmt.Sprintf("%s kept the address from an earlier network of the node", g.bridge)}
		f.Fix = fmt.Sprintf("%s: remove the runtime's default configuration from /etc/cni/net.d, then `ip link "+
			"delete %s` so the cluster's CNI makes the bridge again with %s.", at, g.bridge, want)
	case wantsDefault && !holdsDefault:
		f.Cause = fmt.Sprintf("%s is read before the cluster CNI's: its bridge plugin finds %s holding the cluster "+
			"CNI's %s.", capitalFirst(runtimeDefault), g.bridge, holds[0].Prefix)
		f.Alternatives = []string{fmt.Sprintf("10.88.0.0/16 is the network meant, and %s kept %s from an earlier one",
			g.bridge, holds[0].Prefix)}
		f.Fix = fmt.Sprintf("%s: remove the runtime's default configuration from /etc/cni/net.d (the runtime reads "+
			"the first file by name), and leave %s to the cluster's CNI.", at, g.bridge)
	}
	return f
}

// defaultNet is the subnet of the container runtimes' default CNI
// networks (containerd's, CRI-O's), whose bridge is cni0 too.
var defaultNet = netip.MustParsePrefix("10.88.0.0/16")

// capitalFirst upper-cases the first letter of s.
func capitalFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
