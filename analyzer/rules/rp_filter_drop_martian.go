package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// martianRe is the kernel's line for a packet whose source failed the
// reverse-path check: "IPv4: martian source 192.168.171.67 from
// 192.168.9.157, on dev eth0" (log_martians=1).
var martianRe = lazyre.New(`martian source (\S+) from (\S+), on dev (\S+)`)

// martianRPF reports the kernel's martian source lines, per node and
// device: the filter's own word that it dropped those packets, unless the
// source is one the kernel never accepts or the sysctls show the filter
// loose or off. Lines of ARP requests are reported apart (martianARP):
// the filter declines to answer them, it drops no IP packet.
func martianRPF(p *analyzer.Pass) {
	s := p.Snap
	type key struct {
		node, dev string
		arp       bool // the frames are ARP requests (martianEtherType)
	}
	byKey := map[key][]*model.LogEvent{}
	var keys []key
	for i := range s.Logs {
		le := &s.Logs[i]
		m := martianRe.FindStringSubmatch(le.Message)
		if m == nil {
			continue
		}
		src, err := netip.ParseAddr(m[2])
		if err != nil || !src.Is4() || src.IsLoopback() || src.IsMulticast() || src.IsUnspecified() ||
			src.As4()[0] == 0 || src.As4()[0] >= 240 {
			continue // a source the kernel drops whatever the filter says
		}
		et := martianEtherType(s.Logs, i)
		if et != "" && et != "0800" && et != "0806" {
			continue // a VLAN tag kept in the header (81 00) or another frame: what it carried is not shown
		}
		k := key{le.Node, m[3], et == "0806"}
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], le)
	}
	for _, k := range keys {
		les := byKey[k]
		if k.arp {
			martianARP(p, k.node, k.dev, les)
			continue
		}
		all, dev := rpfSysctl(s, k.node, "all"), rpfSysctl(s, k.node, k.dev)
		if (all.known && all.value >= 2) || (dev.known && dev.value >= 2) ||
			(all.known && dev.known && max(all.value, dev.value) == 0) {
			continue // loose or off: the line is of a source invalid for another reason
		}
		m := martianRe.FindStringSubmatch(les[0].Message)
		f := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Likely,
			Subject: subject("node", k.node, "address", m[1], "interface", k.dev),
			Facts:   map[string]any{"martian_lines": len(les), "in_interface": k.dev, "source": m[2], "destination": m[1]},
			Title: fmt.Sprintf("the reverse-path filter on %s likely drops packets from %s to %s (kernel: martian source)",
				k.dev, m[2], m[1]),
			Supports: []string{fmt.Sprintf("%s: the kernel logs %q: the packet from %s arriving on %s failed the "+
				"reverse-path check", les[0].Pos, strings.TrimSpace(m[0]), m[2], k.dev)},
			Contradicts: []string{"net.ipv4.conf.all.rp_filter and net.ipv4.conf." + k.dev + ".rp_filter both 0, or " +
				"either 2 (loose): the line is then of a source invalid for another reason"},
			Alternatives: []string{"a strict reverse-path filter on " + k.dev + " (rp_filter 1)",
				"a source address the node itself holds or that arrives on a device it never routes back by, with the filter off"},
			Decide: collected("sysctl-net", fmt.Sprintf("net.ipv4.conf.all.rp_filter and net.ipv4.conf.%s.rp_filter", k.dev)),
		}
		if k.node != "" {
			f.Facts["node"] = k.node
		}
		for i, le := range les {
			if i < maxGroupEvidence {
				lm := martianRe.FindStringSubmatch(le.Message)
				f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: le.Pos, Note: "kernel: " + strings.TrimSpace(lm[0])})
			}
		}
		var shown []string
		for _, v := range []rpfValue{all, dev} {
			if v.known {
				f.Facts[v.name] = v.value
				f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: v.pos, Note: v.String()})
				f.Supports = append(f.Supports, fmt.Sprintf("%s: %s", v.pos, v))
				shown = append(shown, v.String())
			}
		}
		f.Summary = fmt.Sprintf("The kernel logged %d martian source %s for packets arriving on %s (first: from %s "+
			"to %s): the route back to the source does not leave by %s, so the reverse-path filter dropped them.",
			len(les), plural(len(les), "line", "lines"), k.dev, m[2], m[1], k.dev)
		f.Cause = fmt.Sprintf("Most likely rp_filter is strict on %s and the path is asymmetric (a NAT to a local "+
			"backend, a second NIC, a Pod device): the bundle does not show both rp_filter values of %s.", k.dev, k.dev)
		if all.known && dev.known {
			f.Severity, f.Certainty, f.Alternatives, f.Decide = analyzer.Error, analyzer.Proven, nil, ""
			f.Cause = fmt.Sprintf("rp_filter is strict on %s (%s) and the route back to %s leaves by another "+
				"device, so the kernel drops the packets as spoofed.", k.dev, strings.Join(shown, ", "), m[2])
		}
		f.Fix = fmt.Sprintf("Make the path symmetric, or make the filter loose where asymmetry is expected: "+
			"`sysctl -w net.ipv4.conf.all.rp_filter=2 net.ipv4.conf.%s.rp_filter=2`, persisted in /etc/sysctl.d.", k.dev)
		p.Report(f)
	}
}

// llHeaderRe is the link-layer header the kernel logs on the line after a
// martian source line, in print_hex_dump's offset form: "ll header:
// 00000000: ff ff ff ff ff ff fa 87 ec eb d5 fc 08 06  ..............".
var llHeaderRe = lazyre.New(`ll header: [0-9a-f]{8}: ((?:[0-9a-f]{2} ){13}[0-9a-f]{2})(?:\s|$)`)

// martianEtherType returns the EtherType, in hex, of the Ethernet header
// the kernel logged after the martian source line logs[i] (the next line
// of the same file), or "" when there is none.
func martianEtherType(logs []model.LogEvent, i int) string {
	if i+1 >= len(logs) {
		return ""
	}
	le, next := &logs[i], &logs[i+1]
	if next.Pos.File != le.Pos.File || next.Pos.Line != le.Pos.Line+1 || next.Node != le.Node {
		return ""
	}
	m := llHeaderRe.FindStringSubmatch(next.Message)
	if m == nil {
		return ""
	}
	b := strings.Fields(m[1])
	return b[12] + b[13]
}

// martianARP reports martian source lines of ARP requests on dev: the
// kernel checks an ARP request's sender against its route back, as it
// checks an IP packet's source, and leaves the request unanswered on dev
// when the check fails. No IP packet is dropped. Where dev is a bridge's
// port (Azure CNI's bridge mode makes eth0 a port of azure0), the bridge
// answers the request and the lines are noise; where dev itself holds the
// address asked for (a second NIC), only another interface can answer.
func martianARP(p *analyzer.Pass, node, dev string, les []*model.LogEvent) {
	m := martianRe.FindStringSubmatch(les[0].Message)
	var senders, targets []string
	for _, le := range les {
		lm := martianRe.FindStringSubmatch(le.Message)
		if !slices.Contains(targets, lm[1]) {
			targets = append(targets, lm[1])
		}
		if !slices.Contains(senders, lm[2]) {
			senders = append(senders, lm[2])
		}
	}
	from := listSome(senders, false)
	f := analyzer.Finding{Severity: analyzer.Info, Certainty: analyzer.Unknown,
		Subject: subject("node", node, "interface", dev),
		Facts: map[string]any{"martian_lines": len(les), "in_interface": dev, "senders": senders, "targets": targets,
			"ether_type": "arp"},
		Title: fmt.Sprintf("the kernel leaves ARP requests from %s unanswered on %s (martian source); no IP packet "+
			"is dropped", from, dev),
		Supports: []string{fmt.Sprintf("%s: the kernel logs %q, and the link-layer header it logs next ends in 08 06: "+
			"the frame is an ARP request, whose sender failed the reverse-path check on %s", les[0].Pos,
			strings.TrimSpace(m[0]), dev)},
	}
	if node != "" {
		f.Facts["node"] = node
	}
	for i, le := range les {
		if i < maxGroupEvidence {
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: le.Pos, Note: "kernel: martian source of an ARP request"})
		}
	}
	f.Summary = fmt.Sprintf("The kernel logged %d martian source %s for ARP requests arriving on %s (from %s, for "+
		"%s). It checks an ARP request's sender against the route back, and that route does not leave by %s, so "+
		"it leaves those requests unanswered there; it drops no IP packet for them.",
		len(les), plural(len(les), "line", "lines"), dev, from, listSome(targets, false), dev)
	f.Fix = "Nothing needs fixing for the lines themselves (`sysctl -w net.ipv4.conf." + dev + ".log_martians=0` " +
		"silences them). AKS nodes in Azure CNI's bridge mode (an azure0 bridge) leave it with a node image upgrade: " +
		"transparent mode has no bridge."
	var master string
	for _, l := range p.Snap.Links {
		if l.Node == node && l.Dev == dev && l.Master != "" {
			master = l.Master
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: l.Pos, Note: dev + " is a port of " + master})
			f.Supports = append(f.Supports, fmt.Sprintf("%s: %s is a port of %s", l.Pos, dev, master))
			break
		}
	}
	if master != "" {
		f.Certainty = analyzer.Likely
		f.Facts["master"] = master
		f.Cause = fmt.Sprintf("%s is a port of the bridge %s: the bridge's own device answers ARP for the addresses "+
			"it holds, so the lines are most likely noise, not a cause.", dev, master)
		f.Contradicts = []string{"the asked-for addresses unreachable from the hosts of " + dev + "'s segment"}
	} else {
		f.Cause = fmt.Sprintf("Not established whether it matters: where %s is a port of a bridge that holds the "+
			"node's address (Azure CNI's bridge mode makes eth0 a port of azure0), the bridge answers and the lines "+
			"are noise; where %s itself holds an address asked for, only another interface of the node can answer "+
			"for it (arp_ignore 0), or none.", dev, dev)
		f.Alternatives = []string{dev + " is a bridge's port and the lines are noise",
			dev + " holds an address asked for and the node leaves ARP for it unanswered"}
		f.Decide = collected("ip-addr", "the master of "+dev+" and the addresses it holds")
	}
	f.Evidence = dedupEvidence(f.Evidence)
	p.Report(f)
}
