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

// CoreDNSLoop finds CoreDNS stopping on a forwarding loop.
var CoreDNSLoop = &analyzer.Rule{
	Name:        "coredns-loop",
	Severity:    analyzer.Error,
	Needs:       []model.Kind{model.KindLogs},
	Uses:        []model.Kind{model.KindKube, model.KindResolvConf},
	SubjectKeys: []string{"node", "component", "zone"},
	Run:         runCoreDNSLoop,
	Symptoms:    []analyzer.SymptomRef{DNSTimeouts.At(130)},
	Decide: "kubectl -n kube-system logs -l k8s-app=kube-dns | grep -i loop\n" +
		"# on the node of each CoreDNS Pod: a nameserver in 127.0.0.0/8 or ::1\ncat /etc/resolv.conf",
	Proof: "CoreDNS's own \"plugin/loop: ... loop detected\" line in its log, and the upstream it forwards to shown " +
		"to be a loopback address: the node's resolv.conf (cat /etc/resolv.conf) naming a nameserver in 127.0.0.0/8 " +
		"or ::1, or the Corefile of the coredns ConfigMap forwarding (forward, proxy) to one",
	Unproven: "the loop line alone names the loop as likely: which upstream sends the queries back (the node's " +
		"resolv.conf naming a local stub such as systemd-resolved's 127.0.0.53 or dnsmasq's 127.0.0.1, or an upstream " +
		"that forwards back to the cluster) is not shown; `cat /etc/resolv.conf` on the node decides",
	Doc: `forwarding loop makes CoreDNS exit

CoreDNS's loop plugin sends a random probe query (HINFO) to itself at
start; if it sees that query come back through its upstream more than
twice, it logs a FATAL line ("plugin/loop: Loop (127.0.0.1:55953 -> :53)
detected for zone ".", see https://coredns.io/plugins/loop#troubleshooting";
"Forwarding loop detected in "." zone. Exiting."; older versions: "Seen
"HINFO IN ..." more than twice, loop detected") and exits. The Pod goes into
CrashLoopBackOff and cluster DNS is down or short of replicas.

The usual cause: the Corefile forwards to /etc/resolv.conf (forward .
/etc/resolv.conf, proxy . /etc/resolv.conf), the CoreDNS Pod (dnsPolicy
Default) inherits the node's resolv.conf, and that names a loopback
nameserver: systemd-resolved's stub 127.0.0.53, a local dnsmasq or
unbound at 127.0.0.1. Inside the Pod that address is the Pod itself, so
CoreDNS forwards to CoreDNS. An upstream that forwards the cluster's
queries back to the cluster DNS loops the same way.

Evidence: the loop line in CoreDNS's log (kubectl logs, the container's log
file), with the zone and, from CoreDNS 1.3, the addresses of the loop;
the node's resolv.conf and the coredns ConfigMap's Corefile when the bundle
holds them.

Severity: error when the node's resolv.conf names a loopback nameserver, or
the Corefile forwards to a loopback address (the log and the configuration
agree); otherwise a warning of likely cause, with the command that shows
the node's resolv.conf.

Fix: point kubelet at the real resolver list (--resolv-conf or the
KubeletConfiguration's resolvConf: /run/systemd/resolve/resolv.conf under
systemd-resolved), or forward the Corefile to explicit upstream addresses
(forward . 8.8.8.8 1.1.1.1) instead of /etc/resolv.conf; then restart the
CoreDNS Pods.`,
}

// corednsLoopRe matches the loop plugin's FATAL lines of every CoreDNS
// version: "Loop (A -> B) detected for zone "Z"", "Forwarding loop
// detected in "Z" zone", "Seen "HINFO IN ..." more than twice, loop
// detected".
var corednsLoopRe = lazyre.New(`(?i)(?:loop \(([^ ]+) -> ([^ )]*)\) detected for zone "([^"]*)"|forwarding loop detected in "([^"]*)" zone|more than twice, loop detected)`)

// loopLine is one loop line of CoreDNS's log.
type loopLine struct {
	pos        model.Pos
	text       string
	zone       string // "" when the line does not say (before CoreDNS 1.2.6)
	from, to   string // the addresses of "Loop (from -> to)", when given
	node, name string // the node and the CoreDNS Pod, when known
	component  string // the log's component, for the Subject
}

// corednsLoopLines finds the loop plugin's lines in the logs, one by one
// when a multi-line entry holds them (a paste that lost the timestamps
// joins lines to the entry above): each is cited at its own line.
func corednsLoopLines(s *model.Snapshot) []loopLine {
	var out []loopLine
	for _, le := range s.Logs {
		for k, line := range strings.Split(le.Message, "\n") {
			m := corednsLoopRe.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			// The plugin's own prefix, or the field the CoreDNS reader
			// took it into, for the first line of the entry.
			if !strings.Contains(line, "plugin/loop") && (k > 0 || le.Fields["plugin"] != "loop") {
				continue
			}
			pos := le.Pos
			if pos.Line > 0 {
				pos.Line += k
			}
			zone := m[3]
			if zone == "" {
				zone = m[4]
			}
			out = append(out, loopLine{pos: pos, text: strings.TrimSpace(line), zone: zone, from: m[1], to: m[2],
				node: le.Node, name: objectName(le.Namespace, le.Pod), component: subjectComponent(le.Source, le.Pos.File)})
		}
	}
	return out
}

// corefileUpstream is a forward or proxy line of a Corefile.
type corefileUpstream struct {
	pos      model.Pos
	line     string
	loopback []string // the upstreams that are loopback addresses
	resolv   bool     // forwards to /etc/resolv.conf
}

// corefileUpstreams reads the forward and proxy lines of the Corefiles of
// the ConfigMaps named coredns (or holding a Corefile).
func corefileUpstreams(s *model.Snapshot) []corefileUpstream {
	var out []corefileUpstream
	for _, cm := range s.Kube.ConfigMaps {
		corefile, ok := cm.Data["Corefile"]
		if !ok {
			continue
		}
		for _, line := range strings.Split(corefile, "\n") {
			f := strings.Fields(line)
			if len(f) < 3 || f[0] != "forward" && f[0] != "proxy" {
				continue
			}
			u := corefileUpstream{pos: cm.Source.FieldPos("data.Corefile"), line: strings.TrimSpace(line)}
			for _, t := range f[2:] {
				if t == "{" {
					break
				}
				if t == "/etc/resolv.conf" {
					u.resolv = true
					continue
				}
				h := strings.TrimPrefix(strings.TrimPrefix(t, "dns://"), "udp://")
				if ap, err := netip.ParseAddrPort(h); err == nil {
					h = ap.Addr().String()
				}
				if a, err := netip.ParseAddr(h); err == nil && a.IsLoopback() {
					u.loopback = append(u.loopback, t)
				}
			}
			out = append(out, u)
		}
	}
	return out
}

func runCoreDNSLoop(p *analyzer.Pass) error {
	lines := corednsLoopLines(p.Snap)
	if len(lines) == 0 {
		return nil
	}
	type group struct {
		node, comp, zone string
		lines            []loopLine
		pods             []string
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, l := range lines {
		k := l.node + "|" + l.component + "|" + l.zone
		g := byKey[k]
		if g == nil {
			g = &group{node: l.node, comp: l.component, zone: l.zone}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.lines = append(g.lines, l)
		if l.name != "" && !slices.Contains(g.pods, l.name) {
			g.pods = append(g.pods, l.name)
		}
	}
	ups := corefileUpstreams(p.Snap)
	for _, g := range groups {
		f := corednsLoopFinding(g.node, g.comp, g.zone, g.lines, g.pods, ups)
		resolvConfJudge(p.Snap, g.node, &f)
		p.Report(f)
	}
	return nil
}

// corednsLoopFinding judges one node's (and zone's) loop lines, then words
// them.
func corednsLoopFinding(node, comp, zone string, lines []loopLine, pods []string, ups []corefileUpstream) analyzer.Finding {
	first := lines[0]
	ev := []analyzer.Evidence{}
	for i, l := range lines {
		if i == maxGroupEvidence {
			break
		}
		ev = append(ev, analyzer.Evidence{Pos: l.pos, Note: "CoreDNS: plugin/loop: loop detected"})
	}
	// The judgement: the loop itself is what CoreDNS says; its cause is
	// proven when the Corefile forwards to a loopback address.
	c := analyzer.Finding{Certainty: analyzer.Likely, Severity: analyzer.Warning,
		Supports: []string{fmt.Sprintf("%s: CoreDNS's loop plugin saw its own probe query come back: %s", first.pos, first.text)},
		Decide: "# on the node where the CoreDNS Pod runs: a nameserver in 127.0.0.0/8 or ::1 is the " +
			"loop when the Corefile forwards to /etc/resolv.conf\ncat /etc/resolv.conf",
	}
	loopbackFrom := ""
	if a, err := netip.ParseAddrPort(first.from); err == nil && a.Addr().IsLoopback() {
		loopbackFrom = first.from
		c.Supports = append(c.Supports, fmt.Sprintf("the probe came back from %s, a loopback address: CoreDNS forwards to "+
			"a resolver on the Pod's own loopback, that is to itself", first.from))
	}
	var proof, viaResolv []corefileUpstream
	for _, u := range ups {
		if len(u.loopback) > 0 {
			proof = append(proof, u)
		}
		if u.resolv {
			viaResolv = append(viaResolv, u)
		}
	}
	switch {
	case len(proof) > 0:
		c.Certainty, c.Severity = analyzer.Proven, analyzer.Error
		c.Decide = ""
		c.Supports = append(c.Supports, fmt.Sprintf("%s: the Corefile forwards to %s (%s), a loopback address: inside "+
			"the CoreDNS Pod that is CoreDNS itself", proof[0].pos, strings.Join(proof[0].loopback, ", "), proof[0].line))
		ev = append(ev, analyzer.Evidence{Pos: proof[0].pos, Note: "Corefile: " + proof[0].line})
	default:
		c.Alternatives = []string{
			"the node's /etc/resolv.conf, which the CoreDNS Pod inherits, names a loopback nameserver (systemd-resolved's " +
				"127.0.0.53, a local dnsmasq or unbound at 127.0.0.1)",
			"an upstream resolver forwards the cluster's queries back to the cluster DNS",
		}
		if len(viaResolv) > 0 {
			c.Supports = append(c.Supports, fmt.Sprintf("%s: the Corefile forwards to /etc/resolv.conf (%s): the node's "+
				"resolver list, whose content the bundle does not hold", viaResolv[0].pos, viaResolv[0].line))
			ev = append(ev, analyzer.Evidence{Pos: viaResolv[0].pos, Note: "Corefile: " + viaResolv[0].line})
		} else if len(ups) > 0 {
			c.Contradicts = append(c.Contradicts, fmt.Sprintf("%s: the Corefile forwards to %s, neither a loopback address "+
				"nor /etc/resolv.conf: the loop goes through that upstream", ups[0].pos, ups[0].line))
			c.Alternatives = []string{c.Alternatives[1], c.Alternatives[0]}
			ev = append(ev, analyzer.Evidence{Pos: ups[0].pos, Note: "Corefile: " + ups[0].line})
		}
	}

	// The words.
	where := ""
	if node != "" {
		where = " on " + node
	}
	zoneWords := "its zones"
	if zone != "" {
		zoneWords = fmt.Sprintf("zone %q", zone)
	}
	values := map[string]any{"loop_lines": len(lines)}
	if node != "" {
		values["node"] = node
	}
	if zone != "" {
		values["zone"] = zone
	}
	if len(pods) > 0 {
		values["pods"] = strings.Join(pods, ", ")
	}
	if first.from != "" {
		values["loop"] = first.from + " -> " + first.to
	}
	summary := fmt.Sprintf("CoreDNS%s detected a forwarding loop for %s and exited: its loop plugin's probe query "+
		"came back through its upstream (%s). The Pod restarts into the same loop (CrashLoopBackOff), and cluster DNS "+
		"is down or short of replicas.", where, zoneWords, first.text)
	if loopbackFrom != "" {
		summary += fmt.Sprintf(" The query came back from %s, a loopback address.", loopbackFrom)
	}
	cause := "CoreDNS forwards to itself: the Corefile forwards to /etc/resolv.conf, the CoreDNS Pod inherits the " +
		"node's resolv.conf, and that names a loopback nameserver (systemd-resolved's 127.0.0.53, a local dnsmasq at " +
		"127.0.0.1), which inside the Pod is CoreDNS; or an upstream sends the queries back to the cluster DNS."
	if len(proof) > 0 {
		cause = fmt.Sprintf("The Corefile forwards to %s, a loopback address, which inside the CoreDNS Pod is CoreDNS "+
			"itself.", strings.Join(proof[0].loopback, ", "))
	}
	return withFinding(c, analyzer.Finding{
		Subject: subject("node", node, "component", comp, "zone", zone),
		Title:   fmt.Sprintf("CoreDNS%s exits on a forwarding loop for %s", where, zoneWords),
		Summary: summary,
		Cause:   cause,
		Fix: "Give CoreDNS a real upstream: set kubelet's resolvConf (--resolv-conf) to /run/systemd/resolve/resolv.conf " +
			"on systemd-resolved nodes, or to a file listing the network's resolvers, or forward the Corefile to explicit " +
			"upstream addresses (forward . 1.1.1.1 8.8.8.8) instead of /etc/resolv.conf; then restart the CoreDNS Pods.",
		Facts:    values,
		Evidence: dedupEvidence(ev),
	})
}

// resolvConfJudge weighs the resolv.conf files of node (or that name no
// node) in a finding not yet proven: a loopback nameserver proves the
// loop's upstream; none weighs against it.
func resolvConfJudge(s *model.Snapshot, node string, f *analyzer.Finding) {
	if f.Certainty == analyzer.Proven {
		return
	}
	for _, rc := range s.ResolvConfs {
		if rc.Node != node && rc.Node != "" {
			continue
		}
		from := "the resolv.conf"
		if rc.Command != "" {
			from = fmt.Sprintf("the resolv.conf (%s)", rc.Command)
		}
		var loop []model.Nameserver
		var addrs []string
		for _, n := range rc.Nameservers {
			addrs = append(addrs, n.Addr.String())
			if n.Addr.IsLoopback() {
				loop = append(loop, n)
			}
		}
		if len(loop) > 0 {
			f.Certainty, f.Severity = analyzer.Proven, analyzer.Error
			f.Alternatives, f.Decide = nil, ""
			f.Supports = append(f.Supports, fmt.Sprintf("%s: %s names nameserver %s, a loopback address: inside the "+
				"CoreDNS Pod, which inherits it, that is CoreDNS itself", loop[0].Pos, from, loop[0].Addr))
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: loop[0].Pos, Note: "nameserver " + loop[0].Addr.String()})
			f.Facts["nameserver"] = loop[0].Addr.String()
			f.Cause = fmt.Sprintf("The node's resolv.conf names nameserver %s, a loopback address; the CoreDNS Pod "+
				"inherits it and forwards there (forward . /etc/resolv.conf), which inside the Pod is CoreDNS itself.", loop[0].Addr)
			return
		}
		if len(rc.Nameservers) > 0 {
			f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s: %s names %s, no loopback address: the loop goes "+
				"through an upstream that sends the queries back (or the file is not the CoreDNS Pod's node's)",
				rc.Nameservers[0].Pos, from, strings.Join(addrs, ", ")))
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: rc.Nameservers[0].Pos, Note: "nameserver " + addrs[0]})
			f.Decide = fmt.Sprintf("# the Corefile's forward target, and the forwarders of the resolver at %s: one that "+
				"sends the cluster's queries back to the cluster DNS is the loop\n"+
				"kubectl -n kube-system get configmap coredns -o jsonpath='{.data.Corefile}'", addrs[0])
			slices.SortStableFunc(f.Alternatives, func(a, b string) int { // the upstream first
				return strings.Compare(fmt.Sprint(!strings.Contains(a, "upstream")), fmt.Sprint(!strings.Contains(b, "upstream")))
			})
		}
	}
}
