package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// InterfaceNotFound finds components that fail because the network
// interface they are set, or built, to use does not exist on the node.
var InterfaceNotFound = &analyzer.Rule{
	Name:        "interface-not-found",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindLogs},
	Uses:        []model.Kind{model.KindLinks, model.KindAddrs},
	SubjectKeys: []string{"node", "component", "interface"},
	Run:         runInterfaceNotFound,
	Symptoms:    []analyzer.SymptomRef{PodsStuckCreating.At(45), ServiceUnreachable.At(282)},
	Proof: "the component's own line that the interface it looks up does not exist (kube-vip's \"is not valid " +
		"interface ... Link not found\", flannel's \"Failed to find interface\", Go's \"no such network interface\", " +
		"a setting under /proc/sys/net/ipv4/conf/IFACE/ missing), and the node's ip link or ip addr without it",
	Unproven: "where the name comes from (a flag, an environment variable, a chart's value, a name built into the " +
		"component); the component's configuration beside `ip -br link` on the node decides",
	Doc: `a component is set to an interface the node lacks

Components that bind to the node's network pick an interface by name:
kube-vip its --interface (vip_interface), flannel its --iface, Calico's
IP_AUTODETECTION_METHOD=interface=..., MetalLB's and keepalived's
settings, and some CNIs a name built in (the AWS VPC CNI's early
releases set eth0's rp_filter). On a node whose interfaces are named
otherwise (ens5, enp0s3, bond0.100, a VM template's names), or with a
name mistyped (a trailing space a template left), the lookup fails and
the component stops or runs without it: the VIP is never announced, the
overlay has no address to carry Pods' traffic, Pods stay in
ContainerCreating.

Evidence: the components' lines, per node, component and name: kube-vip's
"eth1 is not valid interface, reason: get eth1 failed, error: Link not
found", flannel's "Failed to find interface: eth1" and "Could not find
valid interface matching ...", Go's "route ip+net: no such network
interface", "open /proc/sys/net/ipv4/conf/eth0/rp_filter: no such file or
directory"; and the node's ip link or ip addr, which shows the names it
has. A name with spaces around it is said to be so. The interfaces a CNI
makes and removes with each Pod (veth*, cali*, lxc*, tap*) are not read:
one gone is a Pod gone.

Severity: a warning, of likely cause: the component says the name is not
found. Where the node's own listing shows an interface of that name, the
cause is left unknown (it came up after the component looked).

Fix: give the component the node's interface name (or a pattern or a
can-reach method where it takes one), without stray spaces; for a name
built into the component, an upgrade that reads it from the node.`,
}

var (
	// ifaceKubeVipRe is kube-vip's refusal of its interface.
	ifaceKubeVipRe = lazyre.New(`(?:^|msg=")(.+?) is not valid interface, reason: get .+? failed, error: Link not found`)
	// ifaceFlannelRe is flannel's failure to find the interface it was given.
	ifaceFlannelRe = lazyre.New(`(?:Failed to find interface: ?|Could not find valid interface matching |error looking up interface )([^\s:"]+)`)
	// ifaceGoRe is Go's error for an interface name that does not exist.
	ifaceGoRe = lazyre.New(`(?:interface|iface|device) "?([\w.@-]+)"?\S*:? .*\bno such network interface\b|` +
		`\broute ip\+net: no such network interface\b`)
	// ifaceProcRe is a per-interface setting missing: no such interface.
	ifaceProcRe = lazyre.New(`/proc/sys/net/ipv[46]/conf/([^/\s]+)/[\w-]+: no such file or directory`)
	// ifacePodRe names the interfaces a CNI makes and removes with each Pod
	// (a veth's host side, a tap): one gone is a Pod gone, not a name set
	// wrong.
	ifacePodRe = lazyre.New(`^(?:veth\w*|cali[0-9a-f]+|lxc\w+|tap\w+|eni[0-9a-f]+|azv\w+|gke[0-9a-f]+|vnet\d+|vethwe\w*|enc[0-9a-f]+)$`)
)

// ifaceMissing is one component's lines of one interface name.
type ifaceMissing struct {
	node, comp, name string
	quote            string
	lineRun
}

func runInterfaceNotFound(p *analyzer.Pass) error {
	var groups []*ifaceMissing
	byKey := map[string]*ifaceMissing{}
	for i := range p.Snap.Logs {
		le := &p.Snap.Logs[i]
		name, quote, ok := ifaceNotFound(logText(le))
		if !ok || ifacePodRe.MatchString(strings.TrimSpace(name)) {
			continue
		}
		comp := subjectComponent(le.Source, le.Pos.File)
		k := le.Node + "\x00" + comp + "\x00" + name
		g := byKey[k]
		if g == nil {
			g = &ifaceMissing{node: le.Node, comp: comp, name: name, quote: quote}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.add(le)
	}
	for _, g := range groups {
		p.Report(ifaceFinding(p.Snap, g))
	}
	return nil
}

// ifaceNotFound returns the interface name a line says is not found, the
// words that say it, and whether it says one; a name of "all" or
// "default" under /proc/sys is a setting of every interface, not one.
func ifaceNotFound(text string) (name, quote string, ok bool) {
	if m := ifaceKubeVipRe.FindStringSubmatch(text); m != nil {
		return strings.TrimPrefix(m[1], `msg="`), strings.TrimPrefix(m[0], `msg="`), true
	}
	if m := ifaceFlannelRe.FindStringSubmatch(text); m != nil {
		return m[1], m[0], true
	}
	if m := ifaceProcRe.FindStringSubmatch(text); m != nil && m[1] != "all" && m[1] != "default" {
		return m[1], m[0], true
	}
	if m := ifaceGoRe.FindStringSubmatch(text); m != nil && m[1] != "" {
		return m[1], m[0], true
	}
	return "", "", false
}

// ifaceFinding judges one component's lines of one name, against the
// node's listing of its interfaces where the bundle holds one.
func ifaceFinding(s *model.Snapshot, g *ifaceMissing) analyzer.Finding {
	on := onNode(g.node)
	shown := fmt.Sprintf("%q", g.name)
	trimmed := strings.TrimSpace(g.name)
	f := analyzer.Finding{
		Subject:   subject("node", g.node, "component", g.comp, "interface", trimmed),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Title:     fmt.Sprintf("%s%s cannot find interface %s", g.comp, on, shown),
		Summary: fmt.Sprintf("%s%s looks up the interface %s and the node has none of that name (%s): what it binds "+
			"to it (a VIP, the overlay's address, a per-interface setting) is not done.", g.comp, on, shown,
			times(g.count)),
		Cause: fmt.Sprintf("%s is set, or built, to use an interface named %s, which the node does not have: its "+
			"interfaces are named otherwise, or the name is mistyped.", g.comp, shown),
		Alternatives: []string{"the interface exists on other nodes only (nodes of different hardware or images " +
			"name their NICs differently)", "the interface comes up after the component looks for it (a bond or a " +
			"VLAN made later at boot)"},
		Fix: fmt.Sprintf("Give %s the node's interface name (ip -br link lists them), or a pattern or a can-reach "+
			"method where it takes one.", g.comp),
		Decide: fmt.Sprintf("# on %s: the interfaces the node has, against the name the component is given\n"+
			"ip -br link", nodeName(g.node)),
		Facts:    map[string]any{"component": g.comp, "interface": g.name, "lines": g.count},
		Evidence: g.evidence(g.quote, "the last such line"),
		Supports: []string{fmt.Sprintf("%s: %s: %s", g.first.Pos, g.comp, g.quote)},
	}
	if trimmed != g.name {
		f.Cause = fmt.Sprintf("%s is given the interface name %s, spaces and all: no interface is named so (a "+
			"template or a quoted value left the space in).", g.comp, shown)
		f.Fix = fmt.Sprintf("Give %s the name without its spaces (%q).", g.comp, trimmed)
	}
	links := s.LinksOf(g.node)
	if len(links) == 0 {
		return f
	}
	var names []string
	for _, l := range links {
		names = append(names, l.Dev)
		if l.Dev == trimmed && trimmed == g.name {
			// The node has it: it came up after the lookup, or the
			// listing is of another time.
			f.Certainty = analyzer.Unknown
			f.Cause, f.Fix = "", ""
			f.Summary += fmt.Sprintf(" The node's listing has %s: it came up after the component looked, or the "+
				"listing is of another time.", trimmed)
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: l.Pos, Note: trimmed + " listed"})
			return f
		}
	}
	slices.Sort(names)
	f.Supports = append(f.Supports, fmt.Sprintf("the node's interfaces: %s", strings.Join(names, ", ")))
	f.Facts["node_interfaces"] = names
	f.Alternatives = nil // the node's own listing shows the name missing, not late
	return f
}
