package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// NATReplyUntranslated finds connections a node translated whose replies
// went back to the client with the translated addresses.
var NATReplyUntranslated = &analyzer.Rule{
	Name:        "nat-reply-untranslated",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindCapture, model.KindSysctl, model.KindLogs},
	Requires:    []analyzer.FactKey{facts.NATPairs},
	SubjectKeys: []string{"node", "client", "vip", "backend", "module", "setting"},
	Run:         runNATReplyUntranslated,
	Explains:    []*analyzer.Rule{SynUnanswered},
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(60), ConnectionsTimeOut.At(70)},
	Decide: "# on the node that does the NAT: 0, or the module not loaded, sends bridged replies around it\n" +
		"sysctl net.bridge.bridge-nf-call-iptables; lsmod | grep br_netfilter",
	Proof: "the capture shows the same SYN before and after DNAT and the endpoint's SYN/ACK going back untranslated, " +
		"and the node's sysctl output shows net.bridge.bridge-nf-call-iptables = 0 (ip6tables for IPv6)",
	Unproven: "the untranslated replies from the capture, with the causes not ruled out (bridged traffic skipping " +
		"iptables, asymmetric routing around the node that did the NAT) and `sysctl -a 2>/dev/null | grep '^net\\.'` " +
		"(net.bridge.bridge-nf-call-iptables) to decide. Without a capture, lsmod showing br_netfilter not loaded is " +
		"the cause of untranslated replies on a bridge, likely, and so is net.bridge.bridge-nf-call-iptables = 0: the " +
		"replies themselves are not shown",
	Doc: `replies to translated connections go back untranslated

A capture on a node (tcpdump -i any, or one capture per interface) shows the
same SYN twice: as the client sent it, to a Service address, and as the node
forwarded it after DNAT, to an endpoint (same client, same initial sequence
number, microseconds apart). The endpoint answers, but its SYN/ACK reaches the
client with the endpoint's own address instead of the Service's: conntrack
never saw the reply, so it was not translated back. The client has no
connection to the endpoint and resets the SYN/ACK (or ignores it); the
application sees connect timeouts, and synack-reset sees the resets.

This is how same-node Service traffic fails on a bridge whose traffic skips
iptables: br_netfilter not loaded, or net.bridge.bridge-nf-call-iptables = 0,
so the reply bridged from one Pod to the other never meets the NAT; and a
reply routed around the node that did the NAT (asymmetric routing) is lost
the same way. Hairpin mode off on a Pod's bridge port is not a cause: it
stops the DNATed SYN of a Pod reaching itself before the Pod sees it, so no
reply is sent (hairpin-drop reports that).

Evidence: the capture's SYN frames before and after DNAT, the untranslated
SYN/ACK and the client's RST; the node's sysctl output (sysctl -a, or
grep -r . /proc/sys/net/bridge); without a capture, lsmod, and kubeadm's
preflight check ("[ERROR FileContent--proc-sys-net-bridge-bridge-nf-call-iptables]:
/proc/sys/net/bridge/bridge-nf-call-iptables does not exist": br_netfilter
not loaded; "contents are not set to 1": the setting is 0), on which kubeadm
init or join stops.

Severity: error when the node's sysctl output shows bridge-nf-call-iptables
= 0; warning from the capture alone (the cause is one of the above, and
sysctl net.bridge.bridge-nf-call-iptables decides).

Fix: load br_netfilter and set net.bridge.bridge-nf-call-iptables = 1 (and
ip6tables), persisted in /etc/modules-load.d/ and /etc/sysctl.d/; for
asymmetric routing, route the replies back through the node that did the
NAT.`,
}

// natGroup is the untranslated pairs of one client, Service address and
// endpoint on one node.
type natGroup struct {
	node            string
	client          netip.Addr
	service, target netip.AddrPort
	pairs           []facts.NATPair

	// The judgement (judgeNATUntranslated); natWords words it.
	synacks, resets, ignored int    // the SYN/ACKs, and the connections the client reset or ignored
	bridge                   string // the bridge-nf-call sysctl that would send bridged replies through iptables
	bridgeShown, bridgeOff   bool   // the bundle shows it for the node; it is 0
}

func runNATReplyUntranslated(p *analyzer.Pass) error {
	if !p.Snap.Has(model.KindCapture) {
		reportBrNetfilterMissing(p)
		return nil
	}
	var groups []*natGroup
	byKey := map[string]*natGroup{}
	for _, pr := range facts.NATPairs.Of(p).Pairs() {
		if !pr.DNAT || !pr.ReplyUntranslated() {
			continue
		}
		a := pr.After
		if a.Outcome != model.OutcomeSynAckClientRST && a.Outcome != model.OutcomeSynAckNoAck && a.Outcome != model.OutcomeSynAckOnly {
			continue // the client took the reply after all
		}
		if len(a.ClientRST) == 0 && facts.NotYetDue(p.Snap, a.SegPos(a.SYNACK[0]).File, a.SYNACK[0].Time) {
			continue // cut before the translated copy, or the client's answer, was due
		}
		key := fmt.Sprint(a.Node, "|", pr.Before.Client.Addr(), "|", pr.Before.Server, "|", a.Server)
		g := byKey[key]
		if g == nil {
			g = &natGroup{node: a.Node, client: pr.Before.Client.Addr(), service: pr.Before.Server, target: a.Server}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.pairs = append(g.pairs, pr)
	}
	for _, g := range groups {
		f := judgeNATUntranslated(p.Snap, g)
		f.Title, f.Summary, f.Cause, f.Fix = natWords(g)
		p.Report(f)
	}
	return nil
}

// judgeNATUntranslated judges g: the pairs of SYNs before and after DNAT,
// the replies that kept the endpoint's address, and whether the node's
// bridge sysctl explains them. It fills in g and returns the finding
// without its words.
func judgeNATUntranslated(s *model.Snapshot, g *natGroup) analyzer.Finding {
	var ev []analyzer.Evidence
	var isns []string
	for i, pr := range g.pairs {
		a := pr.After
		g.synacks += model.DistinctSegs(a.SYNACK)
		if len(a.ClientRST) > 0 {
			g.resets++
		} else {
			g.ignored++
		}
		isns = append(isns, fmt.Sprint(pr.Before.ISN))
		if i < maxGroupEvidence {
			ev = append(ev, natPairEvidence(pr)...)
		}
	}
	first := g.pairs[0]
	values := map[string]any{
		"client":      g.client.String(),
		"service":     g.service.String(),
		"endpoint":    g.target.String(),
		"connections": len(g.pairs),
		"synacks":     g.synacks,
		"reset":       g.resets,
		"ignored":     g.ignored,
		"sequence":    listUpTo(isns, maxGroupEvidence, false),
	}
	if g.node != "" {
		values["node"] = g.node
	}
	f := analyzer.Finding{
		Subject: subject("node", g.node, "client", g.client.String(), "vip", g.service.String(), "backend", g.target.String()),
		Facts:   values,
		Supports: []string{fmt.Sprintf("%s: the SYN/ACK from %s to %s, not translated back to %s",
			first.After.SegPos(first.After.SYNACK[0]), g.target, first.After.Client, g.service)},
	}
	if len(first.After.SYN) > 0 {
		f.Supports = append([]string{fmt.Sprintf("%s and %s: the SYN of %s to %s, sequence number %d, seen again to %s",
			first.Before.SegPos(first.Before.SYN[0]), first.After.SegPos(first.After.SYN[0]), g.client, g.service,
			first.Before.ISN, g.target)}, f.Supports...)
	} else {
		// A capture on the client: the SYN/ACK acknowledges the SYN sent
		// to the Service.
		f.Supports = append([]string{fmt.Sprintf("%s and %s: the SYN of %s to %s, sequence number %d, acknowledged by a SYN/ACK from %s",
			first.Before.SegPos(first.Before.SYN[0]), first.After.SegPos(first.After.SYNACK[0]), g.client, g.service,
			first.Before.ISN, g.target)}, f.Supports...)
	}
	name := "net.bridge.bridge-nf-call-iptables"
	if g.target.Addr().Is6() {
		name = "net.bridge.bridge-nf-call-ip6tables"
	}
	g.bridge = name
	f.Decide = collected("sysctl-net", name)
	bridgeCause := fmt.Sprintf("bridged traffic skips iptables on the node (br_netfilter not loaded, or %s = 0): the reply "+
		"bridged from %s to %s never meets the conntrack entry of the DNAT", name, g.target.Addr(), g.client)
	asymCause := "asymmetric routing: the reply takes a path around the node that did the NAT"
	sc, have := s.Sysctl(g.node, name)
	g.bridgeShown, g.bridgeOff = have, have && strings.TrimSpace(sc.Value) == "0"
	switch {
	case g.bridgeOff:
		f.Certainty = analyzer.Proven
		f.Severity = analyzer.Error
		f.Decide = ""
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s = 0", sc.Pos, name))
		ev = append(ev, analyzer.Evidence{Pos: sc.Pos, Note: name + " = 0"})
	case have:
		f.Certainty = analyzer.Unknown
		f.Severity = analyzer.Warning
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s: %s = %s, so bridged replies do go through iptables", sc.Pos, name, sc.Value))
		f.Alternatives = []string{asymCause}
		f.Decide = fmt.Sprintf("ip route get %s from %s", g.client, g.target.Addr())
		ev = append(ev, analyzer.Evidence{Pos: sc.Pos, Note: name + " = " + sc.Value})
	default:
		f.Certainty = analyzer.Unknown
		f.Severity = analyzer.Warning
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("the bundle has no %s of the node: = 1 would rule the bridge cause out", name))
		f.Alternatives = []string{bridgeCause, asymCause}
	}
	if g.client == g.target.Addr() {
		// Hairpin mode off drops the DNATed SYN at the Pod's own port: it
		// cannot be why a reply that was sent is untranslated.
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("the client is its own endpoint, but hairpin mode off on its bridge "+
			"port is not the cause: it would have dropped the DNATed SYN before %s answered it", g.target.Addr()))
	}
	f.Evidence = dedupEvidence(ev)
	return f
}

// natWords words the finding of g, as judgeNATUntranslated judged it.
func natWords(g *natGroup) (title, summary, cause, fix string) {
	n, first := len(g.pairs), g.pairs[0]
	reaction := "reset them"
	if g.resets == 0 {
		reaction = "ignored them"
	} else if g.ignored > 0 {
		reaction = fmt.Sprintf("reset %d and ignored %d", g.resets, g.ignored)
	}
	seen := fmt.Sprintf("the same SYN (sequence number %d) is seen before and after DNAT", first.Before.ISN)
	if len(first.After.SYN) == 0 { // a capture on the client
		seen = fmt.Sprintf("the SYN/ACK from the endpoint acknowledges the SYN sent to the Service (sequence number %d)",
			first.Before.ISN)
	}
	title = fmt.Sprintf("replies from %s reach %s untranslated: %d %s to %s failed", g.target, g.client, n,
		plural(n, "connection", "connections"), g.service)
	summary = fmt.Sprintf("%d %s from %s to %s %s translated by the node to %s: %s. %s answered with %d SYN/%s carrying "+
		"its own address instead of %s, and the client %s, having no connection to %s. No reply from %s was seen. The "+
		"application sees connect timeouts.",
		n, plural(n, "connection", "connections"), g.client, g.service, plural(n, "was", "were"), g.target,
		seen, g.target, g.synacks, plural(g.synacks, "ACK", "ACKs"), g.service, reaction, g.target, g.service)
	switch {
	case g.bridgeOff:
		cause = fmt.Sprintf("%s = 0 on the node: traffic between two ports of a bridge does not go through iptables, so the "+
			"SYN/ACK from %s to %s is bridged without meeting the conntrack entry of the DNAT, and keeps the endpoint's "+
			"address.", g.bridge, g.target.Addr(), g.client)
	case g.bridgeShown:
		cause = "The replies were not translated back on their way to the client; the node's sysctl rules out bridged " +
			"traffic skipping iptables, and the bundle does not show which other cause it is."
	default:
		cause = "The replies were not translated back on their way to the client; the bundle does not show why."
	}
	fix = fmt.Sprintf("Make bridged traffic go through iptables: `modprobe br_netfilter; sysctl -w %s=1`, persisted "+
		"(`echo br_netfilter > /etc/modules-load.d/br_netfilter.conf`, `echo '%s = 1' > /etc/sysctl.d/90-br-netfilter.conf`).",
		g.bridge, g.bridge)
	return title, summary, cause, fix
}

// natPairEvidence cites a pair's first SYN before and after NAT, the first
// untranslated SYN/ACK and the client's first RST.
func natPairEvidence(p facts.NATPair) []analyzer.Evidence {
	b, a := p.Before, p.After
	ev := []analyzer.Evidence{{Pos: b.SegPos(b.SYN[0]), Note: fmt.Sprintf("SYN %s -> %s, seq %d, before DNAT", b.Client, b.Server, b.ISN)}}
	if len(a.SYN) > 0 {
		ev = append(ev, analyzer.Evidence{Pos: a.SegPos(a.SYN[0]), Note: fmt.Sprintf("SYN %s -> %s, seq %d, after DNAT", a.Client, a.Server, a.ISN)})
	}
	ev = append(ev, analyzer.Evidence{Pos: a.SegPos(a.SYNACK[0]), Note: fmt.Sprintf("SYN/ACK %s -> %s, untranslated", a.Server, a.Client)})
	if len(a.ClientRST) > 0 {
		ev = append(ev, analyzer.Evidence{Pos: a.SegPos(a.ClientRST[0]), Note: fmt.Sprintf("RST %s -> %s", a.Client, a.Server)})
	}
	return ev
}

// reportBrNetfilterMissing reports, from a bundle without a capture, the
// listings of loaded modules that show br_netfilter not loaded: bridged
// traffic skips iptables, so the replies of a Service's backend to a
// client on the same bridge are not translated back.
func reportBrNetfilterMissing(p *analyzer.Pass) {
	for _, m := range p.Snap.KernelModules {
		if m.Pattern != "" && !strings.Contains("br_netfilter", m.Pattern) || slices.Contains(m.Loaded, "br_netfilter") {
			continue // a grep for other modules, or br_netfilter loaded
		}
		what := "lsmod lists no br_netfilter"
		if m.Pattern != "" {
			what = fmt.Sprintf("`%s` printed nothing", m.Command)
		}
		p.Report(analyzer.Finding{
			Subject:   subject("node", m.Node, "module", "br_netfilter"),
			Severity:  analyzer.Warning,
			Certainty: analyzer.Likely,
			Title:     "br_netfilter is not loaded: bridged replies skip the NAT",
			Summary: fmt.Sprintf("On %s, %s: the kernel module that sends bridged traffic through iptables is not "+
				"loaded. A Pod's connection or DNS query to a Service is DNATed on its way out, but the backend's "+
				"reply to a client on the same bridge is bridged straight back without meeting the NAT: it arrives "+
				"from the backend's own address, and the client drops or resets it.", nodeName(m.Node), what),
			Cause: "br_netfilter is not loaded, so net.bridge.bridge-nf-call-iptables does not exist and bridged " +
				"packets skip iptables: replies from a Service's backend on the same node are not translated back.",
			Fix: "modprobe br_netfilter, sysctl -w net.bridge.bridge-nf-call-iptables=1 (and ip6tables for IPv6); make " +
				"both persistent (/etc/modules-load.d/, /etc/sysctl.d/).",
			Supports: []string{fmt.Sprintf("%s: %s", m.Pos, what)},
			Alternatives: []string{"the CNI does not bridge Pods (routed veths, eBPF): then the module does not " +
				"matter and the failure is elsewhere"},
			Decide:   "# and the Pods' bridge\nsysctl net.bridge.bridge-nf-call-iptables; ip -d link show type bridge",
			Facts:    map[string]any{"module": "br_netfilter", "command": m.Command},
			Evidence: []analyzer.Evidence{{Pos: m.Pos, Note: what}},
		})
	}
	for _, c := range preflightFiles(p.Snap, "net.bridge.bridge-nf-call-iptables") {
		p.Report(brPreflight(c))
	}
	for _, sc := range p.Snap.Sysctls {
		if sc.Name != "net.bridge.bridge-nf-call-iptables" || strings.TrimSpace(sc.Value) != "0" {
			continue
		}
		p.Report(analyzer.Finding{
			Subject:   subject("node", sc.Node, "setting", sc.Name),
			Severity:  analyzer.Warning,
			Certainty: analyzer.Likely,
			Title:     "bridge-nf-call-iptables is 0: bridged replies skip the NAT",
			Summary: fmt.Sprintf("On %s, net.bridge.bridge-nf-call-iptables = 0: bridged packets skip iptables. A "+
				"Pod's connection to a Service is DNATed on its way out, but the backend's reply to a client on the "+
				"same bridge is bridged straight back without meeting the NAT: it arrives from the backend's own "+
				"address, and the client drops or resets it.", nodeName(sc.Node)),
			Cause: "net.bridge.bridge-nf-call-iptables = 0: replies from a Service's backend on the same node are " +
				"not translated back.",
			Fix:      "sysctl -w net.bridge.bridge-nf-call-iptables=1 (and ip6tables for IPv6), persistent in /etc/sysctl.d/.",
			Supports: []string{fmt.Sprintf("%s: %s = 0", sc.Pos, sc.Name)},
			Alternatives: []string{"the CNI does not bridge Pods (routed veths, eBPF): then the setting does not " +
				"matter and the failure is elsewhere"},
			Decide:   "# on the node during a failing call: the backend's reply leaving untranslated\ntcpdump -ni any\nip -d link show type bridge",
			Facts:    map[string]any{"setting": sc.Name, "value": "0"},
			Evidence: []analyzer.Evidence{{Pos: sc.Pos, Note: sc.Name + " = 0"}},
		})
	}
}

// brPreflight words kubeadm's preflight check finding
// bridge-nf-call-iptables missing (br_netfilter not loaded) or not 1.
func brPreflight(c preflightFile) analyzer.Finding {
	what, cause := "br_netfilter is not loaded", "br_netfilter is not loaded (nothing loads it at boot: the container "+
		"runtime does not, Docker used to), so net.bridge.bridge-nf-call-iptables does not exist"
	sub := subject("node", c.le.Node, "module", "br_netfilter")
	alts := []string{"kubeadm runs in a container (LXD, a kind-like node) whose /proc/sys lacks the bridge's " +
		"settings even with the module loaded on the host"}
	if !c.missing {
		what, cause = "bridge-nf-call-iptables is not 1", "net.bridge.bridge-nf-call-iptables is 0: no file in "+
			"/etc/sysctl.d sets it to 1, or one sets it to 0 (CentOS 7's /usr/lib/sysctl.d/00-system.conf)"
		sub = subject("node", c.le.Node, "setting", c.setting)
		alts = nil
	}
	f := analyzer.Finding{
		Subject:   sub,
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Title:     what + ": kubeadm's preflight stops on it",
		Summary: fmt.Sprintf("kubeadm's preflight check read %s%s: bridged packets would skip iptables, so the "+
			"replies of a Service's backend to a client on the same bridge would not be translated back, and "+
			"kubeadm refuses to set the node up (init or join stops).", c.says(), onNode(c.le.Node)),
		Cause:        cause + ".",
		Supports:     []string{fmt.Sprintf("%s: kubeadm's preflight: %s", c.le.Pos, c.says())},
		Evidence:     []analyzer.Evidence{{Pos: c.le.Pos, Note: "kubeadm preflight: " + c.says()}},
		Facts:        map[string]any{"setting": c.setting, "missing": c.missing},
		Alternatives: alts,
		Decide:       "# on the node: not loaded, or 0, as kubeadm's check read\nlsmod | grep br_netfilter; sysctl net.bridge.bridge-nf-call-iptables",
		Fix: "modprobe br_netfilter and sysctl -w net.bridge.bridge-nf-call-iptables=1 (and ip6tables); keep both " +
			"(/etc/modules-load.d/k8s.conf, /etc/sysctl.d/k8s.conf, kubeadm's prerequisites), then run kubeadm again.",
	}
	if !c.fatal {
		f.Title = what + ": kubeadm's preflight check was ignored"
		f.Summary = fmt.Sprintf("kubeadm's preflight check read %s%s and was made non-fatal: bridged packets skip "+
			"iptables, so the replies of a Service's backend to a client on the same bridge are not translated "+
			"back, and the client drops or resets them.", c.says(), onNode(c.le.Node))
		f.Alternatives = append(f.Alternatives, "the module was loaded and the setting made after kubeadm ran",
			"the CNI does not bridge Pods (routed veths, eBPF): then the setting does not matter")
	}
	return f
}
