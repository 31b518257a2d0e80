package rules

import (
	"fmt"
	"maps"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// Failed connection attempts: what syn-unanswered and syn-refused share.
// Each reports the failed attempts of its outcome per server endpoint, a
// host failing on many ports as one scan, and one port failing on many
// hosts as one sweep; its file words the findings (synWords).

// synFailureFacts are the facts the rules of failed attempts require.
var synFailureFacts = []analyzer.FactKey{facts.FailedAttempts, facts.AddrRoles}

// synWords words the findings of one outcome of failed attempts.
type synWords struct {
	outcome model.Outcome
	// skip leaves out a group of attempts that proves nothing.
	skip func(g *facts.FailGroup) bool
	// endpoint words the finding of one server endpoint, scan that of a
	// host failing on many ports, sweep that of a port failing on many
	// hosts. Each sets the Title, Summary, Cause and Fix of f, and may
	// add to its Facts.
	endpoint, scan, sweep func(f *analyzer.Finding, g *facts.FailGroup, t synText)
}

// synText is what the words of a finding are made of.
type synText struct {
	Subject  string         // the server endpoint, the host of a scan
	Server   netip.AddrPort // the server endpoint; for a sweep, only its port
	Count    int            // the ports of a scan, the hosts of a sweep
	Listed   string         // the ports of a scan, the hosts of a sweep, as a list
	Clients  string         // the clients, as a list
	Attempts string         // "attempt" or "attempts"
	What     string         // what the server or host is (" The server is ..."), or ""
}

// failMerge is the failed attempts of a scan (one host's many ports) or a
// sweep (one port's many hosts), merged.
type failMerge struct {
	*facts.FailGroup
	ports []uint16
	parts []*facts.FailGroup
}

// scanGroups merges the groups of each host (per node) that fail on at
// least minPorts ports, leaving out ports whose endpoint the Kubernetes
// objects name (a Service port, an endpoint: those are reported on their
// own), and adds the groups merged to merged.
func scanGroups(groups []*facts.FailGroup, roles facts.AddrIndex, minPorts int, merged map[*facts.FailGroup]bool) []*failMerge {
	if minPorts < 2 {
		minPorts = math.MaxInt // only what a capture counted as a scan
	}
	type hostKey struct {
		node string
		addr netip.Addr
	}
	var order []hostKey
	byHost := map[hostKey][]*facts.FailGroup{}
	counted := map[hostKey]bool{} // hosts whose ports were counted together: scans
	for _, g := range groups {
		if g.Server.Port() != 0 && roles.Of(g.Server.Addr(), g.Server.Port()).NamePort() {
			continue
		}
		k := hostKey{g.Node, g.Server.Addr()}
		if byHost[k] == nil {
			order = append(order, k)
		}
		byHost[k] = append(byHost[k], g)
		if g.Server.Port() == 0 {
			counted[k] = true
		}
	}
	var out []*failMerge
	for _, k := range order {
		gs := byHost[k]
		ports := map[uint16]bool{}
		for _, g := range gs {
			if g.Server.Port() == 0 {
				for _, pt := range g.HostPorts {
					ports[pt] = true
				}
			} else {
				ports[g.Server.Port()] = true
			}
		}
		if len(ports) < minPorts && !counted[k] {
			continue
		}
		sc := mergeFailures(k.node, netip.AddrPortFrom(k.addr, 0), gs, merged)
		sc.ports = slices.Sorted(maps.Keys(ports))
		out = append(out, sc)
	}
	return out
}

// sweepGroups merges, per node and port, the groups of hosts that fail on
// that one port, when at least minHosts do and nothing in the Kubernetes
// objects names them: a client trying one port across many hosts (a
// monitoring job scraping targets that are gone, a sweep). Groups already
// merged with their host's other ports are left out; the groups merged are
// added to merged.
func sweepGroups(groups []*facts.FailGroup, roles facts.AddrIndex, minHosts int, merged map[*facts.FailGroup]bool) []*failMerge {
	if minHosts < 2 {
		return nil
	}
	type portKey struct {
		node string
		port uint16
	}
	var order []portKey
	byPort := map[portKey][]*facts.FailGroup{}
	for _, g := range groups {
		if merged[g] || g.Server.Port() == 0 || len(roles.Of(g.Server.Addr(), g.Server.Port())) > 0 {
			continue
		}
		k := portKey{g.Node, g.Server.Port()}
		if byPort[k] == nil {
			order = append(order, k)
		}
		byPort[k] = append(byPort[k], g)
	}
	var out []*failMerge
	for _, k := range order {
		gs := byPort[k]
		if len(gs) < minHosts {
			continue
		}
		out = append(out, mergeFailures(k.node, netip.AddrPortFrom(netip.Addr{}, k.port), gs, merged))
	}
	return out
}

// mergeFailures joins the groups of a scan or a sweep, adding them to
// merged.
func mergeFailures(node string, srv netip.AddrPort, gs []*facts.FailGroup, merged map[*facts.FailGroup]bool) *failMerge {
	for _, g := range gs {
		merged[g] = true
	}
	return &failMerge{FailGroup: facts.MergeFailGroups(node, srv, gs), parts: gs}
}

// partsEvidence cites the first attempt kept of each merged group, up to
// maxGroupEvidence of them, and counts the attempts kept.
func (m *failMerge) partsEvidence() ([]analyzer.Evidence, int) {
	kept := 0
	var ev []analyzer.Evidence
	for _, g := range m.parts {
		kept += len(g.Attempts)
		if len(ev) >= maxGroupEvidence || len(g.Attempts) == 0 {
			continue
		}
		ev = append(ev, failedSegEvidence(g.Attempts[0], false)...)
	}
	return ev, kept
}

// failedSegEvidence cites an attempt's SYNs and RSTs from the server: the
// first of each, or all of them.
func failedSegEvidence(a *model.Attempt, all bool) []analyzer.Evidence {
	syns, rsts := a.SYN, a.ServerRST
	if !all {
		syns, rsts = syns[:min(1, len(syns))], rsts[:min(1, len(rsts))]
	}
	var ev []analyzer.Evidence
	for _, x := range syns {
		ev = append(ev, analyzer.Evidence{Pos: a.SegPos(x), Note: fmt.Sprintf("SYN %s -> %s", a.Client, a.Server)})
	}
	for _, x := range rsts {
		ev = append(ev, analyzer.Evidence{Pos: a.SegPos(x), Note: fmt.Sprintf("RST %s -> %s", a.Server, a.Client)})
	}
	return ev
}

// failFacts are the facts of every finding of failed attempts.
func failFacts(g *facts.FailGroup, kept int) map[string]any {
	values := map[string]any{
		"attempts": g.N,
		"clients":  g.Clients,
	}
	if !g.First.IsZero() { // evidence without times (tcpdump -t) has none
		values["first"] = g.First.Format(time.RFC3339Nano)
		values["last"] = g.Last.Format(time.RFC3339Nano)
	}
	if kept < g.N {
		values["attempts_kept"] = kept
	}
	if g.More {
		values["more_clients"] = true
	}
	if g.Node != "" {
		values["node"] = g.Node
	}
	return values
}

// maxListedHosts bounds how many hosts a sweep finding lists.
const maxListedHosts = 20

func sweepFinding(sw *failMerge, w synWords) analyzer.Finding {
	var hosts []string
	for _, g := range sw.parts {
		hosts = append(hosts, g.Server.Addr().String())
	}
	ev, kept := sw.partsEvidence()
	listed := listUpTo(hosts, maxListedHosts, false)
	values := failFacts(sw.FailGroup, kept)
	values["port"] = int(sw.Server.Port())
	values["hosts"] = len(hosts)
	values["host_list"] = listed
	delete(values, "more_clients") // a sweep says "and more" in its words only
	f := analyzer.Finding{Severity: analyzer.Warning, Facts: values, Evidence: ev}
	t := synText{Server: sw.Server, Count: len(hosts), Listed: listed,
		Clients: listSome(sw.Clients, sw.More), Attempts: plural(sw.N, "attempt", "attempts")}
	f.Subject = subject("node", sw.Node, "port", fmt.Sprint(sw.Server.Port()), "proto", "tcp")
	w.sweep(&f, sw.FailGroup, t)
	synCertainty(&f, w.outcome, ev, false, fmt.Sprintf("port %d of %d hosts", sw.Server.Port(), len(hosts)), sw.Server)
	return f
}

// maxListedPorts bounds how many ports a scan finding lists.
const maxListedPorts = 20

func scanFinding(sc *failMerge, w synWords, roles facts.AddrIndex) analyzer.Finding {
	host := sc.Server.Addr().String()
	var rs facts.Roles // what the host is: a Node's or a Pod's address
	for _, r := range roles.Of(sc.Server.Addr(), 0) {
		if r.Port == 0 {
			rs = append(rs, r)
		}
	}
	var listed []string
	for i, pt := range sc.ports {
		if i == maxListedPorts {
			listed = append(listed, fmt.Sprintf("and %d more", len(sc.ports)-maxListedPorts))
			break
		}
		listed = append(listed, fmt.Sprint(pt))
	}
	ev, kept := sc.partsEvidence()
	values := failFacts(sc.FailGroup, kept)
	values["server"] = host
	values["ports"] = len(sc.ports)
	values["port_list"] = strings.Join(listed, ", ")
	f := analyzer.Finding{Severity: analyzer.Warning, Facts: values, Evidence: ev}
	what := ""
	if len(rs) > 0 {
		values["server_is"] = rs.Words()
		what = fmt.Sprintf(" The host is %s.", rs.Words())
		f.Evidence = append(f.Evidence, rs.Evidence()...)
	}
	f.Subject = subject("node", sc.Node, "address", host, "proto", "tcp")
	w.scan(&f, sc.FailGroup, synText{Subject: host, Server: sc.Server, Count: len(sc.ports), Listed: strings.Join(listed, ", "),
		Clients: listSome(sc.Clients, sc.More), Attempts: plural(sc.N, "attempt", "attempts"), What: what})
	synCertainty(&f, w.outcome, ev, false, fmt.Sprintf("%d ports of %s", len(sc.ports), host), sc.Server)
	return f
}

func endpointFinding(g *facts.FailGroup, w synWords, roles facts.AddrIndex) analyzer.Finding {
	rs := roles.Of(g.Server.Addr(), g.Server.Port())
	sev := captureSeverity(rs)
	var ev []analyzer.Evidence
	for i, a := range g.Attempts {
		if i == maxGroupEvidence {
			break
		}
		ev = append(ev, failedSegEvidence(a, true)...)
	}
	ev = append(ev, rs.Evidence()...)
	values := failFacts(g, len(g.Attempts))
	values["server"] = g.Server.String()
	what := ""
	if len(rs) > 0 {
		values["server_is"] = rs.Words()
		what = fmt.Sprintf(" The server is %s.", rs.Words())
	}
	f := analyzer.Finding{Severity: sev, Facts: values, Evidence: ev,
		Subject: subject("node", g.Node, "address", g.Server.String(), "proto", "tcp")}
	w.endpoint(&f, g, synText{Subject: g.Server.String(), Server: g.Server, Clients: listSome(g.Clients, g.More),
		Attempts: plural(g.N, "attempt", "attempts"), What: what})
	synCertainty(&f, w.outcome, ev, sev == analyzer.Error, g.Server.String(), g.Server)
	if sev == analyzer.Error {
		for _, e := range rs.Evidence() {
			f.Supports = append(f.Supports, fmt.Sprintf("%s: %s, so something should answer there", e.Pos, e.Note))
		}
	}
	return f
}

// synCertainty fills the certainty of a finding of failed attempts to
// subject, whose evidence ev starts with the capture's packets. The
// failure itself is what the finding asserts: proven when the Kubernetes
// objects say the endpoint should answer (live), shown by the capture alone
// otherwise, and either way its mechanism stays among the alternatives,
// with the command that tells them apart.
func synCertainty(f *analyzer.Finding, outcome model.Outcome, ev []analyzer.Evidence, live bool, subject string, srv netip.AddrPort) {
	f.Certainty = analyzer.Unknown
	if live {
		f.Certainty = analyzer.Proven
	}
	if len(ev) > 0 {
		f.Supports = append(f.Supports, fmt.Sprintf("%s: %s", ev[0].Pos, ev[0].Note))
	}
	port := srv.Port()
	switch outcome {
	case model.OutcomeRefused:
		f.Supports = append(f.Supports, fmt.Sprintf("the capture shows %s answering the SYNs with an RST", subject))
		f.Contradicts = append(f.Contradicts, "a listener on the port in `ss -lntp` of the host would point at a REJECT "+
			"rule instead of a missing listener")
		f.Alternatives = []string{"nothing listens on the port at that address (the process is down, or listens on " +
			"another port or address than the Service's targetPort)",
			"a firewall rule rejects the connection with a TCP reset (iptables REJECT --reject-with tcp-reset)"}
		f.Decide = collected("ss-lntup", fmt.Sprintf("the listener on port %d", port))
		if port == 0 {
			f.Decide = collected("ss-lntup", fmt.Sprintf("on %s", srv.Addr()))
		}
	default:
		f.Supports = append(f.Supports, fmt.Sprintf("the capture shows SYNs to %s and nothing back: no SYN/ACK, RST "+
			"or ICMP error", subject))
		f.Contradicts = append(f.Contradicts, "a capture taken on one side of the path, or filtered, may miss replies "+
			"that were sent")
		f.Alternatives = []string{"a firewall or NetworkPolicy drops the SYNs",
			"the host or backend is down or gone (a stale DNAT rule or endpoint sends the SYNs to an address nobody has)",
			"the replies take another path than the one captured (asymmetric routing)"}
		f.Decide = collected("iptables-save", "on the server's node: a DROP rule or policy that matches the SYNs")
	}
}

// runSynFailures reports the failed attempts of w.outcome: scans, sweeps,
// then each server endpoint left.
// synFailureSubjectKeys are the subject keys of syn-unanswered and
// syn-refused: an endpoint's address, a scanned host's, or a swept port.
var synFailureSubjectKeys = []string{"node", "address", "port", "proto"}

// synFailureParams are the parameters of syn-unanswered and syn-refused.
var synFailureParams = []analyzer.Param{
	{Name: "min_attempts", Type: analyzer.Integer, Default: 1, Range: analyzer.AtLeast(1),
		Doc: "the fewest failed connection attempts that make a finding"},
	{Name: "scan_ports", Type: analyzer.Integer, Default: 10, Range: analyzer.AtLeast(2),
		Doc: "the fewest ports of one host that a client's failed attempts must reach to be reported together as a port scan"},
	{Name: "sweep_hosts", Type: analyzer.Integer, Default: 10, Range: analyzer.AtLeast(2),
		Doc: "the fewest hosts that a client's failed attempts to one port must reach to be reported together as a sweep"},
}

func runSynFailures(p *analyzer.Pass, w synWords) error {
	groups := facts.FailedAttempts.Of(p).Of(w.outcome)
	roles := facts.AddrRoles.Of(p)
	minAttempts := int(p.Param("min_attempts", 1))
	merged := map[*facts.FailGroup]bool{}
	for _, sc := range scanGroups(groups, roles, int(p.Param("scan_ports", 10)), merged) {
		if sc.N >= minAttempts {
			p.Report(scanFinding(sc, w, roles))
		}
	}
	for _, sw := range sweepGroups(groups, roles, int(p.Param("sweep_hosts", 10)), merged) {
		if sw.N >= minAttempts {
			p.Report(sweepFinding(sw, w))
		}
	}
	for _, g := range groups {
		if g.N < minAttempts || merged[g] || w.skip != nil && w.skip(g) {
			continue
		}
		f := endpointFinding(g, w, roles)
		if w.outcome == model.OutcomeUnanswered {
			if n, where := answeredAttempts(p.Snap, g.Node, g.Server); n > 0 {
				answeredMeanwhile(&f, g.Server, n, where)
			}
		}
		p.Report(f)
	}
	runClientFailures(p, w.outcome, minAttempts)
	return nil
}

// answeredAttempts counts the connection attempts to srv, seen on node,
// that srv answered (with a SYN/ACK or an RST), and says where the first
// is: the first kept one's position, or else the capture file and time of
// the first counted one (a capture read in summary mode).
func answeredAttempts(s *model.Snapshot, node string, srv netip.AddrPort) (n int, where string) {
	for i := range s.Attempts {
		if a := &s.Attempts[i]; a.Server == srv && a.Node == node && a.Outcome.Answered() {
			if n == 0 {
				where = a.Pos.String()
			}
			n++
		}
	}
	var first *model.EndpointStats
	for i := range s.EndpointStats {
		if e := &s.EndpointStats[i]; e.Server == srv && e.Node == node && e.Outcome.Answered() {
			n += e.Attempts
			if first == nil || e.First.Before(first.First) {
				first = e
			}
		}
	}
	if where == "" && first != nil {
		where = first.File
		if !first.First.IsZero() {
			where = fmt.Sprintf("%s, counted from %s", first.File, first.First.UTC().Format(time.RFC3339Nano))
		}
	}
	return n, where
}

// answeredMeanwhile tells, in a finding of SYNs to srv left unanswered,
// that srv answered n other attempts in the same capture, the first where
// says: it was up and reachable, so the cause is not a backend down for
// the whole capture.
func answeredMeanwhile(f *analyzer.Finding, srv netip.AddrPort, n int, where string) {
	f.Facts["answered_attempts"] = n
	seen := fmt.Sprintf("the capture shows %s answering %d other connection %s", srv, n, plural(n, "attempt", "attempts"))
	if where != "" {
		seen += fmt.Sprintf(" (the first at %s)", where)
	}
	f.Contradicts = append(f.Contradicts, seen+": it was up and reachable in that capture")
	f.Summary += fmt.Sprintf(" %s answered %d other connection %s in the same capture.", srv, n, plural(n, "attempt", "attempts"))
	f.Cause = fmt.Sprintf("%s answers other attempts in the same capture, so it is not simply down: these SYNs are "+
		"dropped on the way or at the server (a firewall or NetworkPolicy that matches only them, conntrack or "+
		"SNAT port clashes on a node, a full accept queue, a NAT to another backend), or they are not ordinary "+
		"connection attempts (a scanner's probes with unusual flags get no answer by design).", srv)
	f.Alternatives = append([]string{"the SYNs differ from those answered (other clients, other times, unusual flags or options)"},
		f.Alternatives...)
}
