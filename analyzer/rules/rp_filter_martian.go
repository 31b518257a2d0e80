package rules

import (
	"fmt"
	"net/netip"
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
// loose or off.
func martianRPF(p *analyzer.Pass) {
	s := p.Snap
	type key struct{ node, dev string }
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
		k := key{le.Node, m[3]}
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], le)
	}
	for _, k := range keys {
		les := byKey[k]
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
				f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: le.Pos, Note: "kernel: " + strings.TrimSpace(m[0])})
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
