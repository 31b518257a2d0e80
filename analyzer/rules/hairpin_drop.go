package rules

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/internal/shq"
	"github.com/netmortem/netmortem/model"
)

// HairpinDrop finds Pods whose connections to their own Service are
// translated back to them and never answered.
var HairpinDrop = &analyzer.Rule{
	Name:        "hairpin-drop",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindCapture, model.KindLinks},
	Uses:        []model.Kind{model.KindLogs},
	Requires:    []analyzer.FactKey{facts.NATPairs},
	SubjectKeys: []string{"node", "client", "vip", "bridge"},
	Run:         runHairpinDrop,
	Symptoms:    []analyzer.SymptomRef{ProbesTimeOut.At(90), ServiceUnreachable.At(70), ConnectionsTimeOut.At(80)},
	Proof: "the capture shows a Pod's SYN to a Service translated back to the Pod itself and never answered, and the " +
		"node's bridge ports (bridge -d link show, ip -d link, or their hairpin_mode files) all show hairpin off",
	Unproven: "the Pod's unanswered connections to itself through the Service, with the causes not ruled out (hairpin " +
		"off on its bridge port, its traffic to itself not masqueraded) and `ip -d link` (the bridge ports' hairpin setting) to decide; when " +
		"every bridge port the bundle shows has hairpin on, the rule is silent",
	Doc: `a Pod reaching itself through its Service is dropped

A capture on a node shows a Pod sending a SYN to a Service address and the
node translating it (DNAT) to the Pod's own address, the same SYN (same
client, same sequence number) seen after the NAT, and nothing coming back:
no SYN/ACK, no RST. On a bridge whose traffic goes through iptables
(br_netfilter), the DNATed SYN must leave by the bridge port it came in on,
which a bridge forbids unless the port is in hairpin mode: with hairpin off
the bridge drops it and the Pod never sees it. The application sees connect
timeouts when, and only when, the Service picks the calling Pod itself: a
Service with one endpoint fails every time, one with several fails for a
share of the connections.

Evidence: the capture's SYN to the Service and its copy after DNAT to the
client's own address; the node's bridge ports' hairpin setting (bridge -d
link show, ip -d link, ip -j -d link, or grep . /sys/class/net/*/brport/
hairpin_mode).

Without a capture, a kubelet that says it runs hairpin-veth ("Hairpin mode
set to "hairpin-veth"") beside bridge ports that all show hairpin off
(kubernetes#23322) is likely the cause: the claim does not hold where it
must.

Severity: error when every bridge port of the node the bundle shows has
hairpin off; warning (likely) when some have it on and some off, since the
bundle does not say which is the Pod's (bridge fdb show decides); warning
with the cause unknown when the bundle shows no hairpin setting. When every
port shown has hairpin on, hairpin is ruled out and the rule is silent
(syn-unanswered reports the symptom): a Pod also drops a SYN from its own
address that was not masqueraded.

Fix: turn hairpin mode on for the Pods' bridge ports: the kubelet's
--hairpin-mode=hairpin-veth (or promiscuous-bridge), the bridge CNI plugin's
"hairpinMode": true, or by hand bridge link set dev VETH hairpin on.`,
}

// hairpinGroup is the unanswered connections of one Pod to itself through
// one Service address on one node.
type hairpinGroup struct {
	node    string
	client  netip.Addr
	service netip.AddrPort
	pairs   []facts.NATPair

	// The judgement (judgeHairpin), which hairpinWords words.
	retx    int          // the SYNs' retransmissions
	on, off []model.Link // the node's bridge ports with hairpin on, off
}

func runHairpinDrop(p *analyzer.Pass) error {
	var groups []*hairpinGroup
	byKey := map[string]*hairpinGroup{}
	for _, pr := range facts.NATPairs.Of(p).Pairs() {
		b, a := pr.Before, pr.After
		if !pr.DNAT || b.Client.Addr() != a.Server.Addr() || len(a.SYN) == 0 {
			continue
		}
		if a.Outcome != model.OutcomeUnanswered || b.Outcome != model.OutcomeUnanswered {
			continue // answered, reset or refused on either side
		}
		if facts.NotYetDue(p.Snap, b.Pos.File, b.Start) {
			continue // a cut capture ends before a reply was due
		}
		key := fmt.Sprint(a.Node, "|", b.Client.Addr(), "|", b.Server)
		g := byKey[key]
		if g == nil {
			g = &hairpinGroup{node: a.Node, client: b.Client.Addr(), service: b.Server}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.pairs = append(g.pairs, pr)
	}
	reported := map[string]bool{}
	for _, g := range groups {
		if f, ok := judgeHairpin(p.Snap, g); ok {
			f.Title, f.Summary, f.Cause, f.Fix = hairpinWords(g)
			p.Report(f)
			reported[g.node] = true
		}
	}
	for _, c := range kubeletHairpinClaims(p.Snap) {
		if !reported[c.node] {
			if f, ok := judgeHairpinClaim(p.Snap, c); ok {
				p.Report(f)
			}
		}
	}
	return nil
}

// kubeletHairpinRe reads the kubelet's own line naming the hairpin mode it
// runs with: "Hairpin mode set to "hairpin-veth"" (after any fallback).
var kubeletHairpinRe = lazyre.New(`^Hairpin mode set to "(hairpin-veth|promiscuous-bridge)"$`)

// hairpinClaim is the hairpin-veth mode a node's kubelet says it runs with.
type hairpinClaim struct {
	node string
	line *model.LogEvent
}

// kubeletHairpinClaims lists, per node, the kubelet's last line saying it
// sets hairpin mode on the Pods' veths.
func kubeletHairpinClaims(s *model.Snapshot) []hairpinClaim {
	var out []hairpinClaim
	at := map[string]int{}
	for i := range s.Logs {
		le := &s.Logs[i]
		m := kubeletHairpinRe.FindStringSubmatch(strings.TrimSpace(le.Message))
		if m == nil || !strings.Contains(strings.ToLower(le.Source+" "+le.Pos.File), "kubelet") {
			continue
		}
		j, seen := at[le.Node]
		if !seen {
			at[le.Node], j = len(out), len(out)
			out = append(out, hairpinClaim{node: le.Node})
		}
		out[j].line = le
		if m[1] != "hairpin-veth" {
			out[j].line = nil // the bridge, not its ports, is in hairpin mode
		}
	}
	return out
}

// judgeHairpinClaim judges a kubelet that says it runs hairpin-veth against
// the node's bridge ports: every port shown with hairpin off contradicts the
// claim, and a Pod reaching itself through its Service is dropped there;
// likely, since the drop itself is not shown. Nothing when a port has
// hairpin on or none is shown.
func judgeHairpinClaim(s *model.Snapshot, c hairpinClaim) (analyzer.Finding, bool) {
	var off []model.Link
	for _, l := range s.LinksOf(c.node) {
		if l.Hairpin != nil && *l.Hairpin {
			return analyzer.Finding{}, false
		}
		if l.Hairpin != nil {
			off = append(off, l)
		}
	}
	if c.line == nil || len(off) == 0 {
		return analyzer.Finding{}, false
	}
	bridge, glob, where := off[0].Master, off[0].Master, ""
	if bridge == "" {
		bridge, glob = "the bridge", "*"
	}
	if c.node != "" {
		where = " on " + c.node
	}
	f := analyzer.Finding{
		Subject:   subject("node", c.node, "bridge", glob),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Supports: []string{fmt.Sprintf("%s: the kubelet runs hairpin-veth: it should turn hairpin on for every Pod's "+
			"veth", c.line.Pos), fmt.Sprintf("%s: %d port(s) of %s show hairpin_mode 0", off[0].Pos, len(off), bridge)},
		Evidence: []analyzer.Evidence{{Pos: c.line.Pos, Note: "kubelet: hairpin mode hairpin-veth"}},
		Contradicts: []string{"no capture of a Pod connecting to its own Service in the bundle: the drop itself is " +
			"not shown"},
		Alternatives: []string{"the ports shown are not Pods' (containers the kubelet does not manage), and the " +
			"Pods' ports have hairpin on"},
		Decide: fmt.Sprintf("for f in /sys/class/net/%s/brif/*/hairpin_mode; do echo \"$f $(cat $f)\"; done", glob),
		Facts:  map[string]any{"hairpin_mode": "hairpin-veth", "ports_off": len(off), "bridge": bridge},
		Title:  fmt.Sprintf("The kubelet claims hairpin-veth but the ports of %s have hairpin off", bridge),
		Summary: fmt.Sprintf("The kubelet%s says it runs hairpin-veth (hairpin on for each Pod's veth), but %d port(s) "+
			"of %s show hairpin_mode 0: a Pod connecting to its own Service and translated back to itself is dropped "+
			"by the bridge.", where, len(off), bridge),
		Cause: "The kubelet does not turn hairpin on for the Pods' bridge ports although its mode says it does " +
			"(kubernetes#23322: after falling back from promiscuous-bridge it never applied hairpin-veth).",
		Fix: "Turn hairpin on for the Pods' ports (echo 1 > /sys/class/net/<bridge>/brif/<veth>/hairpin_mode, or the " +
			"bridge CNI plugin's \"hairpinMode\": true), and upgrade the kubelet to a release that sets it.",
	}
	for i, l := range off {
		if i < 4 {
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: l.Pos, Note: fmt.Sprintf("%s: hairpin off", l.Dev)})
		}
	}
	return f, true
}

// judgeHairpin judges g from the node's bridge ports; ok is false when
// hairpin mode is on on all of them. It fills in g and returns the finding
// without its words.
func judgeHairpin(s *model.Snapshot, g *hairpinGroup) (analyzer.Finding, bool) {
	var on, off []model.Link
	for _, l := range s.LinksOf(g.node) {
		switch {
		case l.Hairpin == nil:
		case *l.Hairpin:
			on = append(on, l)
		default:
			off = append(off, l)
		}
	}
	if len(on) > 0 && len(off) == 0 {
		return analyzer.Finding{}, false // hairpin ruled out
	}
	g.on, g.off = on, off
	var ev []analyzer.Evidence
	for i, pr := range g.pairs {
		b, a := pr.Before, pr.After
		g.retx += len(b.SYN) - 1
		if i < maxGroupEvidence {
			ev = append(ev,
				analyzer.Evidence{Pos: b.SegPos(b.SYN[0]), Note: fmt.Sprintf("SYN %s -> %s, seq %d, before DNAT", b.Client, b.Server, b.ISN)},
				analyzer.Evidence{Pos: a.SegPos(a.SYN[0]), Note: fmt.Sprintf("SYN %s -> %s, seq %d, after DNAT: back to the client", a.Client, a.Server, a.ISN)})
		}
	}
	n := len(g.pairs)
	first := g.pairs[0]
	target := first.After.Server
	values := map[string]any{
		"client":              g.client.String(),
		"service":             g.service.String(),
		"endpoint":            target.String(),
		"connections":         n,
		"syn_retransmissions": g.retx,
	}
	if g.node != "" {
		values["node"] = g.node
	}
	f := analyzer.Finding{
		Subject: subject("node", g.node, "client", g.client.String(), "vip", g.service.String()),
		Facts:   values,
		Supports: []string{fmt.Sprintf("%s and %s: the SYN of %s to %s, sequence number %d, seen again to %s, its own address, "+
			"and never answered", first.Before.SegPos(first.Before.SYN[0]), first.After.SegPos(first.After.SYN[0]), g.client,
			g.service, first.Before.ISN, target)},
	}
	hairpinCause := "hairpin mode is off on the Pod's bridge port: the bridge does not send the DNATed SYN back out the port it came in on"
	masqCause := fmt.Sprintf("the Pod's traffic to itself is not masqueraded: %s drops a SYN from its own address", g.client)
	ports := func(ls []model.Link) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l.Dev)
		}
		return out
	}
	switch {
	case len(off) > 0 && len(on) == 0:
		f.Certainty, f.Severity = analyzer.Proven, analyzer.Error
		for i, l := range off {
			if i < maxGroupEvidence {
				bridge := l.Master
				if bridge == "" {
					bridge = "a bridge"
				}
				f.Supports = append(f.Supports, fmt.Sprintf("%s: %s, a port of %s, has hairpin off", l.Pos, l.Dev, bridge))
				ev = append(ev, analyzer.Evidence{Pos: l.Pos, Note: l.Dev + " hairpin off"})
			}
		}
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("the bundle does not tie %s to its port; every bridge port it shows "+
			"(%s) has hairpin off", g.client, listSome(ports(off), false)))
		values["hairpin_off"] = ports(off)
	case len(off) > 0:
		f.Certainty, f.Severity = analyzer.Likely, analyzer.Warning
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s has hairpin off (the ports with it off: %s)", off[0].Pos,
			off[0].Dev, strings.Join(ports(off), ", ")))
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s %s hairpin on, and the bundle does not say which port is %s's",
			listSome(ports(on), false), plural(len(on), "has", "have"), g.client))
		f.Alternatives = []string{hairpinCause, masqCause}
		f.Decide = "# the port the Pod's MAC address is learned on\nbridge fdb show"
		if off[0].Master != "" {
			f.Decide = fmt.Sprintf("# the port the Pod's MAC address is learned on\nbridge fdb show br %s", shq.Quote(off[0].Master))
		}
		ev = append(ev, analyzer.Evidence{Pos: off[0].Pos, Note: off[0].Dev + " hairpin off"})
		values["hairpin_off"] = ports(off)
		values["hairpin_on"] = ports(on)
	default:
		f.Certainty, f.Severity = analyzer.Unknown, analyzer.Warning
		f.Contradicts = append(f.Contradicts, "the bundle shows no bridge port's hairpin setting (ip -d link): "+
			"hairpin on for the Pod's port would rule the bridge out")
		f.Alternatives = []string{hairpinCause, masqCause}
		f.Decide = collected("ip-link", "the hairpin setting of the bridge ports")
	}
	f.Evidence = dedupEvidence(ev)
	return f, true
}

// hairpinWords words the finding of g, as judgeHairpin judged it.
func hairpinWords(g *hairpinGroup) (title, summary, cause, fix string) {
	n, first, retx := len(g.pairs), g.pairs[0], g.retx
	title = fmt.Sprintf("%s cannot reach itself through %s: %d %s translated back to it got no answer", g.client, g.service,
		n, plural(n, "connection", "connections"))
	summary = fmt.Sprintf("%d %s from %s to %s %s translated by the node to %s, the client's own address: the same SYN "+
		"(sequence number %d) is seen before and after DNAT, and nothing came back, not even after %d %s. "+
		"The application sees connect timeouts.", n, plural(n, "connection", "connections"), g.client, g.service,
		plural(n, "was", "were"), first.After.Server, first.Before.ISN, retx, plural(retx, "retransmission", "retransmissions"))
	switch {
	case len(g.off) > 0 && len(g.on) == 0:
		cause = fmt.Sprintf("Hairpin mode is off on the node's bridge ports: the SYN %s sent to %s is translated back to %s "+
			"at the bridge, which does not send a frame back out the port it came in on, so the Pod never sees it.",
			g.client, g.service, g.client)
	case len(g.off) > 0:
		cause = fmt.Sprintf("The SYN %s sent to %s is translated back to it and dropped before it answers: hairpin mode "+
			"is off on some of the node's bridge ports, likely the Pod's.", g.client, g.service)
	default:
		cause = fmt.Sprintf("The SYN %s sent to %s is translated back to it and never answered; the bundle does not show why.",
			g.client, g.service)
	}
	fix = "Turn hairpin mode on for the Pods' bridge ports: the kubelet's --hairpin-mode=hairpin-veth, the bridge CNI " +
		"plugin's \"hairpinMode\": true, or `bridge link set dev VETH hairpin on` for the Pod's port."
	return title, summary, cause, fix
}
