package rules

import (
	"fmt"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/internal/shq"
	"net/netip"
	"slices"
	"strconv"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// VXLANChecksumOffload finds the kernel dropping VXLAN packets for a bad
// UDP checksum: the sender's checksum offload on its VXLAN device,
// miscomputed after NAT.
var VXLANChecksumOffload = &analyzer.Rule{
	Name:     "vxlan-checksum-offload",
	Severity: analyzer.Warning,
	NeedsAny: []model.Kind{model.KindLogs, model.KindCapture},
	Uses:     []model.Kind{model.KindLinks},
	Proof: "the receiving node's kernel logs \"UDP: bad checksum. From A:p to B:port\", or its capture printed " +
		"by tcpdump -v shows \"A.p > B.port: [bad udp cksum ...]\", where port is a VXLAN " +
		"port (4789, 8472, or the dstport of a vxlan link the bundle lists): the VXLAN packets node A sends " +
		"leave with a wrong outer UDP checksum; that A's VXLAN device has tx checksum offload on (ethtool -k) " +
		"is what the kernel's line does not show, so the rule names the offload as likely",
	Unproven: "the kernel's lines, or the capture's, alone make the offload likely (a warning), with " +
		"`ethtool -k <vxlan device> | grep tx-checksum` on the sending node as what decides, and turning it off " +
		"(`ethtool -K flannel.1 tx-checksum-ip-generic off`) as the test; bad checksums to other ports are not " +
		"reported",
	SubjectKeys: []string{"node", "source", "port"},
	Run:         runVXLANChecksumOffload,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(170), DNSTimeouts.At(110), ConnectionsTimeOut.At(140)},
	Doc: `bad UDP checksums drop the VXLAN packets (tx offload)

The overlay's VXLAN packets leave the sending node with a wrong outer UDP
checksum and the receiving node's kernel drops them: it logs "UDP: bad
checksum. From A:p to B:8472 ulen N" (a capture on the receiver prints
"bad udp cksum"). The known cause is checksum offload on the VXLAN device
(flannel.1, vxlan.calico): packets a node sends through the tunnel after
NAT (its own connections to a Service whose Pod is on another node) got
a miscomputed checksum on several kernels (fixed in Linux 5.7, commit
ea64d8d6c675 "netfilter: ... fix udp checksum", and again broken on
some 5.8 to 5.10 builds). Cross-node traffic to Services from the nodes
themselves (DNS through the Service IP, health checks, hostNetwork Pods)
times out while Pod-to-Pod traffic works.

Evidence: kernel lines (dmesg, journalctl -k) "UDP: bad checksum", or the
packets of a receiving node's capture printed by tcpdump -v with "[bad udp
cksum ...]", whose destination port is VXLAN's: 4789 (IANA, Calico,
Cilium), 8472 (Linux's default, flannel), or the dstport of a vxlan link
in ip -d link output.
The sending address is the node whose VXLAN device to look at.

Severity: warning of likely cause: the line shows the checksum is bad on
arrival, not that offload made it so (a NIC or virtual switch that
corrupts packets would log the same), and the bundle's ethtool output is
not read. Bad checksums to other ports are not this rule's.

Fix: on the sending nodes turn off tx checksum offload on the VXLAN
device, "ethtool -K flannel.1 tx-checksum-ip-generic off" (vxlan.calico
for Calico; flannel and Calico have settings that do it at start:
Calico's FelixConfiguration featureDetectOverride
"ChecksumOffloadBroken=true"), and upgrade the kernel to one with the fix.`,
}

// udpBadChecksum is the kernel's line for a UDP packet dropped for its
// checksum: "UDP: bad checksum. From 10.0.0.1:31846 to 10.0.0.2:8472 ulen 75".
var udpBadChecksum = lazyre.New(`^UDP(?:v6)?: bad checksum\. From \[?([0-9A-Fa-f.:]+?)\]?:(\d+) to \[?([0-9A-Fa-f.:]+?)\]?:(\d+) ulen (\d+)`)

// wellKnownVXLANPorts are the UDP ports VXLAN uses when nothing says
// otherwise: IANA's 4789, and 8472, Linux's default that flannel keeps.
var wellKnownVXLANPorts = []int{4789, 8472}

// vxlanBadSum is one sender's VXLAN packets a node dropped.
type vxlanBadSum struct {
	node, from string
	port       int
	to         []string
	lines      []vxlanSumLine
	captured   bool // the group is a capture's packets, without a kernel line
}

// vxlanSumLine is one packet with a bad checksum: the kernel's line or the
// capture's packet.
type vxlanSumLine struct {
	pos model.Pos
	msg string
}

func runVXLANChecksumOffload(p *analyzer.Pass) error {
	s := p.Snap
	var groups []*vxlanBadSum
	byKey := map[string]*vxlanBadSum{}
	add := func(node string, from, to netip.Addr, port int, line vxlanSumLine, captured bool) {
		if _, ok := vxlanPortOf(s, node, port); !ok {
			return
		}
		k := fmt.Sprintf("%s|%s|%d", node, from, port)
		g := byKey[k]
		if g == nil {
			g = &vxlanBadSum{node: node, from: from.String(), port: port, captured: captured}
			byKey[k] = g
			groups = append(groups, g)
		}
		if !slices.Contains(g.to, to.String()) {
			g.to = append(g.to, to.String())
		}
		g.lines = append(g.lines, line)
	}
	for i := range s.Logs {
		le := &s.Logs[i]
		m := udpBadChecksum.FindStringSubmatch(le.Message)
		if m == nil {
			continue
		}
		from, err1 := netip.ParseAddr(m[1])
		to, err2 := netip.ParseAddr(m[3])
		port, err3 := strconv.Atoi(m[4])
		if err1 == nil && err2 == nil && err3 == nil {
			add(le.Node, from, to, port, vxlanSumLine{le.Pos, le.Message}, false)
		}
	}
	for _, b := range s.BadChecksums {
		if b.Proto == "udp" {
			add(b.Node, b.Src.Addr(), b.Dst.Addr(), int(b.Dst.Port()), vxlanSumLine{b.Pos,
				fmt.Sprintf("%s > %s: bad udp cksum", b.Src, b.Dst)}, true)
		}
	}
	for _, g := range groups {
		p.Report(vxlanChecksumFinding(s, g))
	}
	return nil
}

// vxlanPortOf tells whether port is a VXLAN port on node: the dstport of
// one of its vxlan links (returned), or a well-known VXLAN port.
func vxlanPortOf(s *model.Snapshot, node string, port int) (*model.Link, bool) {
	for _, l := range s.LinksOf(node) {
		if l.Kind == "vxlan" && l.Port == port {
			return &l, true
		}
	}
	return nil, slices.Contains(wellKnownVXLANPorts, port)
}

func vxlanChecksumFinding(s *model.Snapshot, g *vxlanBadSum) analyzer.Finding {
	dev := "flannel.1"
	if g.port == 4789 {
		dev = "vxlan.calico"
	}
	link, _ := vxlanPortOf(s, g.node, g.port)
	if link != nil {
		dev = link.Dev
	}
	f := analyzer.Finding{
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Subject:   subject("node", g.node, "source", g.from, "port", strconv.Itoa(g.port)),
		Facts: map[string]any{"source": g.from, "port": g.port, "destinations": g.to,
			"bad_checksum_lines": len(g.lines), "vxlan_device": dev},
	}
	if g.node != "" {
		f.Facts["node"] = g.node
	}
	for _, le := range g.lines[:min(len(g.lines), maxGroupEvidence)] {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: le.pos, Note: le.msg})
	}
	first, who := g.lines[0], "the kernel dropped"
	if g.captured {
		who = "the capture shows"
	}
	f.Supports = []string{fmt.Sprintf("%s: %s %d UDP %s from %s to port %d, VXLAN's, with a bad "+
		"checksum (%q)", first.pos, who, len(g.lines), plural(len(g.lines), "packet", "packets"), g.from, g.port, first.msg)}
	if link != nil {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: link.Pos, Note: fmt.Sprintf("%s: vxlan dstport %d", link.Dev, link.Port)})
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s is the vxlan link of port %d", link.Pos, link.Dev, g.port))
	}
	f.Contradicts = []string{fmt.Sprintf("the same lines after `ethtool -K %s tx-checksum-ip-generic off` on %s: "+
		"the checksums are then broken elsewhere (a NIC, a virtual switch)", dev, g.from)}
	f.Alternatives = []string{
		fmt.Sprintf("tx checksum offload on %s's VXLAN device (%s), miscomputed after NAT", g.from, dev),
		"a NIC, hypervisor or virtual switch on the path that corrupts the packets",
	}
	f.Decide = fmt.Sprintf("# on %s\nethtool -k %s | grep tx-checksum", g.from, shq.Quote(dev))
	on := ""
	if g.node != "" {
		on = " on " + g.node
	}
	f.Title = fmt.Sprintf("VXLAN packets from %s to port %d are dropped%s for a bad UDP checksum: tx checksum offload on %s",
		g.from, g.port, on, dev)
	f.Summary = fmt.Sprintf("The kernel%s logged %d %s \"UDP: bad checksum\" for packets from %s to %s, port %d: "+
		"the overlay's VXLAN packets arrive with a wrong outer checksum and are dropped, so traffic through the "+
		"tunnel from that node (typically its own connections to a Service whose Pod is here) times out.",
		on, len(g.lines), plural(len(g.lines), "time", "times"), g.from, listSome(g.to, false), g.port)
	if g.captured {
		f.Summary = fmt.Sprintf("The capture%s shows %d %s from %s to %s, port %d, with a bad UDP checksum (tcpdump's "+
			"\"bad udp cksum\"): the overlay's VXLAN packets arrive with a wrong outer checksum, which the receiving "+
			"kernel drops, so traffic through the tunnel from that node (typically its own connections to a Service "+
			"whose Pod is here) times out.", on, len(g.lines), plural(len(g.lines), "packet", "packets"), g.from,
			listSome(g.to, false), g.port)
	}
	f.Cause = fmt.Sprintf("Most likely the sending node %s computes the outer UDP checksum wrong: with tx checksum "+
		"offload on its VXLAN device (%s), packets it NATs into the tunnel leave with a bad checksum on kernels with "+
		"the netfilter checksum bug (before 5.7, and some 5.8 to 5.10 builds).", g.from, dev)
	f.Fix = fmt.Sprintf("On the sending nodes run `ethtool -K %s tx-checksum-ip-generic off` (and make it persistent: "+
		"a udev rule or the CNI's setting, Calico's featureDetectOverride \"ChecksumOffloadBroken=true\"), and "+
		"upgrade to a kernel with the fix.", shq.Quote(dev))
	return f
}
