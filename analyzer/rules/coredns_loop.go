package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

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
		"that forwards back to the cluster) is not shown; `cat /etc/resolv.conf` on the node decides. Logged by a " +
		"CoreDNS before 1.2.6, which also reports a loop when its upstream does not answer at start-up, the line's time " +
		"after the start tells a loop (at once) from that false alarm (seconds after), and without times it names no cause",
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

CoreDNS before 1.2.6 also logged the loop line, and exited, when its
upstream did not answer during start-up, as after a node's reboot before
its network is up (coredns/coredns#2255, fixed in 1.2.6): it counted its
probe again on each retry after a failed query, seconds after its start,
where a loop brings the probe back at once. When the log names such a
version ("CoreDNS-1.2.2") and nothing shows a loopback upstream, a loop
line 2 s or more after the version line (and within the 30 s the plugin
probes for) is likely that false alarm, one within a second of it likely
a loop; one 1 to 2 s after it, later than 40 s, or the log gives no times
for, names neither.

Severity: error when the node's resolv.conf names a loopback nameserver, or
the Corefile forwards to a loopback address (the log and the configuration
agree); otherwise a warning of likely cause, with the command that shows
the node's resolv.conf; when the log names a CoreDNS before 1.2.6, a
warning of the false alarm or of the loop, as their times say, or of
unknown cause without them.

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
	t          time.Time // the line's time, zero when the log gives none
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
			out = append(out, loopLine{pos: pos, t: le.Time, text: strings.TrimSpace(line), zone: zone, from: m[1], to: m[2],
				node: le.Node, name: objectName(le.Namespace, le.Pod), component: subjectComponent(le.Source, le.Pos.File)})
		}
	}
	return out
}

// corednsVersionRe matches the version line CoreDNS logs at start
// ("[INFO] CoreDNS-1.2.2", or the bare "CoreDNS-1.2.2" it prints too).
var corednsVersionRe = lazyre.New(`^\s*CoreDNS-(\d+)\.(\d+)\.(\d+)\b`)

// corednsVersion is the version a CoreDNS log names, and where.
type corednsVersion struct {
	pos  model.Pos
	t    time.Time // the line's time, zero when the log gives none
	name string    // "CoreDNS-1.2.2"
	// falseLoop: a version before 1.2.6, whose loop plugin also reports a
	// loop when its upstream does not answer during start-up
	// (coredns/coredns#2255, fixed in 1.2.6).
	falseLoop bool
}

// corednsVersionIn returns the version line of the log (file, node and
// Pod) of the loop line first that the line comes after: the last one before it (a log of several
// starts names a version at each) that has a time, CoreDNS's own
// "[INFO] CoreDNS-1.2.2" rather than the bare copy it prints after it,
// or else the last one; any of the file's when the log gives no line
// numbers.
func corednsVersionIn(s *model.Snapshot, first loopLine) (corednsVersion, bool) {
	at := first.pos
	var last, timed corednsVersion
	for _, le := range s.Logs {
		// The same file, node and Pod: a file of several kubectl logs
		// holds each Pod's start.
		if le.Pos.File != at.File || le.Node != first.node || objectName(le.Namespace, le.Pod) != first.name {
			continue
		}
		for k, line := range strings.Split(le.Message, "\n") {
			m := corednsVersionRe.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			pos := le.Pos
			if pos.Line > 0 {
				pos.Line += k
			}
			if at.Line > 0 && pos.Line > at.Line {
				continue
			}
			var v [3]int
			known := true
			for i := range v {
				n, err := strconv.Atoi(m[i+1])
				v[i], known = n, known && err == nil
			}
			old := known && (v[0] < 1 || v[0] == 1 && (v[1] < 2 || v[1] == 2 && v[2] < 6))
			last = corednsVersion{pos: pos, t: le.Time, name: strings.TrimSpace(line), falseLoop: old}
			if k == 0 && !le.Time.IsZero() {
				timed = last
			}
		}
	}
	switch {
	case timed.name != "" && timed.name == last.name && last.pos.Line-timed.pos.Line <= 3:
		// The same start's: the bare copy follows two lines after.
		return timed, true
	case last.name != "":
		return last, true
	}
	return corednsVersion{}, false
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
		if v, ok := corednsVersionIn(p.Snap, g.lines[0]); ok && v.falseLoop {
			falseLoopJudge(v, g.lines[0], g.node, g.zone, &f)
		}
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
	where, zoneWords := loopWords(node, zone)
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

// loopWords words where the loop is: " on NODE" ("" for none), and
// "zone \"Z\"" or "its zones".
func loopWords(node, zone string) (where, zoneWords string) {
	where, zoneWords = "", "its zones"
	if node != "" {
		where = " on " + node
	}
	if zone != "" {
		zoneWords = fmt.Sprintf("zone %q", zone)
	}
	return where, zoneWords
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

// falseLoopJudge weighs, in a finding not proven, the version of CoreDNS
// that logged the loop: before 1.2.6 the loop plugin also reported a
// loop, and CoreDNS exited, when its upstream did not answer during
// start-up (coredns/coredns#2255): it counted its probe once for each
// retry, each after the query had failed. A loop brings the probe back
// at once: the loop line comes within a second of CoreDNS's start, the
// false alarm seconds after it. The time between the version line and
// the loop line tells them apart; without it, the finding names neither.
func falseLoopJudge(v corednsVersion, first loopLine, node, zone string, f *analyzer.Finding) {
	if f.Certainty == analyzer.Proven {
		return // a loopback upstream shown: a loop whatever the version
	}
	alt := fmt.Sprintf("no loop: %s, before 1.2.6, also reports one when its upstream does not answer during start-up "+
		"(coredns/coredns#2255, fixed in 1.2.6), as after a node's reboot before its network is up", v.name)
	f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: v.pos, Note: v.name})
	f.Facts["version"] = strings.TrimPrefix(v.name, "CoreDNS-")
	gap := first.t.Sub(v.t)
	// The loop plugin probes for its first 30 s: a loop line later than
	// that is not of the start whose version line this is.
	timed := !v.t.IsZero() && !first.t.IsZero() && gap >= 0 && gap <= falseLoopWithin
	if timed {
		f.Facts["seconds_to_loop"] = gap.Seconds()
	}
	if timed && gap < falseLoopAfter/2 {
		// At once: a loop, as the finding says; the false alarm last.
		f.Alternatives = append(f.Alternatives, alt)
		f.Supports = append(f.Supports, fmt.Sprintf("%s: the loop line comes %s after CoreDNS's start (%s): the probe "+
			"came back at once, as through a loop, where %s's false alarm waits for its retries to fail", first.pos,
			gap, v.pos, v.name))
		return
	}
	where, zoneWords := loopWords(node, zone)
	f.Title = fmt.Sprintf("CoreDNS%s exits on its loop check for %s", where, zoneWords)
	f.Supports[0] = fmt.Sprintf("%s: CoreDNS's loop plugin reported its own probe query back: %s", first.pos, first.text)
	f.Fix = "Upgrade CoreDNS to 1.2.6 or later, whose loop plugin no longer takes an upstream out of reach for a loop. " +
		"If it still exits, give it a real upstream: " + strings.TrimPrefix(f.Fix, "Give CoreDNS a real upstream: ")
	f.Decide = "# on the node of a CoreDNS Pod: a nameserver in 127.0.0.0/8 or ::1 is the loop; one that does not answer " +
		"(NAMESERVER, each\n# of those listed) is the false alarm of CoreDNS before 1.2.6\ncat /etc/resolv.conf\n" +
		"dig +time=2 +tries=1 @NAMESERVER . NS"
	if timed && gap >= falseLoopAfter {
		// Seconds after the start: the retries of a probe that failed.
		f.Certainty = analyzer.Likely
		f.Alternatives = append(slices.Clone(f.Alternatives), "a forwarding loop that brought the probe back late")
		f.Supports = append(f.Supports, fmt.Sprintf("%s: the loop line comes %s after CoreDNS's start (%s): a loop "+
			"brings the probe back at once, while %s counts it again on each retry after its query failed", first.pos,
			gap, v.pos, v.name))
		f.Summary = fmt.Sprintf("CoreDNS%s exited on its loop plugin's check for %s (%s), %s after it started. %s, "+
			"before 1.2.6, says so when its probe query fails again and again, as when its upstream does not answer "+
			"during start-up: a loop brings the probe back at once. The Pod restarts into the same check "+
			"(CrashLoopBackOff) for as long as the upstream is out of reach, and cluster DNS is down or short of replicas.",
			where, zoneWords, first.text, gap, v.name)
		f.Cause = fmt.Sprintf("No loop: %s's loop plugin took an upstream that did not answer during start-up for a "+
			"loop (coredns/coredns#2255, fixed in 1.2.6): the upstream was out of reach when CoreDNS started.", v.name)
		f.Title = fmt.Sprintf("CoreDNS%s exits on its loop check's false alarm: its upstream did not answer at start-up", where)
		return
	}
	// No time to tell them apart.
	if len(f.Contradicts) > 0 || len(f.Alternatives) == 0 {
		// The resolver list names no loopback address: the false alarm
		// first.
		f.Alternatives = append([]string{alt}, f.Alternatives...)
	} else {
		f.Alternatives = append(slices.Clone(f.Alternatives[:1]), append([]string{alt}, f.Alternatives[1:]...)...)
	}
	f.Certainty, f.Cause = analyzer.Unknown, ""
	f.Contradicts = append(f.Contradicts, fmt.Sprintf("%s: %s, before 1.2.6, whose loop plugin takes an upstream that "+
		"does not answer at start-up for a loop", v.pos, v.name))
	f.Summary = fmt.Sprintf("CoreDNS%s exited on its loop plugin's check for %s (%s). %s's loop plugin says so when its "+
		"probe query comes back through a forwarding loop, and also when its upstream does not answer during start-up: "+
		"this is a loop or an upstream out of reach. The Pod restarts into the same check (CrashLoopBackOff), and cluster "+
		"DNS is down or short of replicas.", where, zoneWords, first.text, v.name)
}

// falseLoopAfter is how long after its start a CoreDNS before 1.2.6 logs
// the false alarm at the earliest: its probe's query has failed twice
// (each a timeout of at least a second, and a second's wait between
// tries).
const falseLoopAfter = 2 * time.Second

// falseLoopWithin bounds the time from CoreDNS's start to the loop line of
// the same start: the loop plugin probes for 30 s.
const falseLoopWithin = 40 * time.Second
