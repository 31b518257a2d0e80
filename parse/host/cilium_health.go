package host

import (
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/format"
	"github.com/netmortem/netmortem/parse/internal/text"
)

// CiliumHealthFormat reads what Cilium's agent found of the nodes through
// its health checks: the Cluster health table of `cilium status` and
// `cilium-dbg status`, and the probes `cilium-health status` lists.
var CiliumHealthFormat = &format.Format{
	Name:    "cilium-health",
	Kind:    model.KindPodChecks,
	Command: "cilium status (or cilium-dbg status, cilium-health status --probe), in a cilium agent's Pod",
	Doc: "one record per node of the Cluster health table (\"Name IP Node Endpoints\", or \"Name IP Reachable " +
		"Endpoints reachable\" before Cilium 1.14: each path reachable, unreachable or unknown, true or false) and " +
		"per node block of cilium-health's probes (\"Host connectivity to 10.0.0.2:\", \"ICMP to stack: OK, " +
		"RTT=...\", \"HTTP to agent: ...\"; a secondary address's failure counts as its path's); `cilium status`'s " +
		"other sections are passed over",
	Sniff: sniffCiliumHealth,
	Parse: format.Records(readCiliumHealth, func(s *model.Snapshot, out []model.CiliumNodeHealth) {
		s.CiliumHealth = append(s.CiliumHealth, out...)
	}, "nodes"),
}

// CiliumHealth parses `cilium status` or `cilium-health status`. A line of
// the health table or of the probes that is of neither is reported with
// its position and the rest is read. name is used only in positions.
func CiliumHealth(r io.Reader, name string) ([]model.CiliumNodeHealth, error) {
	return format.ReadAll(r, name, readCiliumHealth)
}

// ciliumHealthHeader reports whether fields are the health table's header:
// "Name IP Node Endpoints", or "Name IP Reachable Endpoints reachable".
func ciliumHealthHeader(f []string) bool {
	return len(f) >= 4 && f[0] == "Name" && f[1] == "IP" &&
		(len(f) == 4 && f[2] == "Node" && f[3] == "Endpoints" ||
			len(f) == 5 && f[2] == "Reachable" && f[3] == "Endpoints" && f[4] == "reachable")
}

// ciliumReach returns the reachability a health table's cell gives.
func ciliumReach(cell string) (string, bool) {
	switch cell {
	case model.HealthReachable, "true":
		return model.HealthReachable, true
	case model.HealthUnreachable, "false":
		return model.HealthUnreachable, true
	case model.HealthUnknown:
		return model.HealthUnknown, true
	}
	return "", false
}

// ciliumAddr returns the first address of an IP cell ("10.0.0.2",
// "172.19.0.3,fc00:c111::3", "Unavailable").
func ciliumAddr(cell string) (netip.Addr, bool) {
	if cell == "Unavailable" {
		return netip.Addr{}, true
	}
	first, _, _ := strings.Cut(cell, ",")
	a, err := netip.ParseAddr(first)
	return a, err == nil
}

// ciliumPeerName splits a node's name as Cilium prints it, "kind-worker
// (localhost)", into the name and whether it is the reporting node.
func ciliumPeerName(s string) (string, bool) {
	if n, ok := strings.CutSuffix(s, "(localhost)"); ok {
		return strings.TrimSpace(n), true
	}
	return s, false
}

// ciliumHealthReader is readCiliumHealth's state.
type ciliumHealthReader struct {
	out   []model.CiliumNodeHealth
	table bool // in the Cluster health table's rows
	nodes bool // in cilium-health's node blocks
	cur   int  // the node block being read, -1 before one
	path  *ciliumPath
}

// ciliumPath is the path whose probes are being read: which node's, and
// whether it is the host's or the endpoint's, its primary address or a
// secondary one.
type ciliumPath struct {
	host, secondary bool
}

func readCiliumHealth(r io.Reader, src *format.File, errs *model.ErrorList) []model.CiliumNodeHealth {
	st := &ciliumHealthReader{cur: -1}
	text.ReadLines(r, src, errs, text.Hooks{Prompt: func(*text.Line, string) {
		st.table, st.nodes, st.cur, st.path = false, false, -1, nil
	}}, st.line)
	for i := range st.out {
		st.out[i].Host = ciliumPathState(st.out[i].Host, st.out[i].HostICMP, st.out[i].HostHTTP)
		st.out[i].Endpoint = ciliumPathState(st.out[i].Endpoint, st.out[i].EndpointICMP, st.out[i].EndpointHTTP)
	}
	return st.out
}

// ciliumPathState is a path's reachability from its probes, where the
// table did not give it.
func ciliumPathState(state, icmp, http string) string {
	if state != "" || icmp == "" && http == "" {
		return state
	}
	if icmp != "" && icmp != "OK" || http != "" && http != "OK" {
		return model.HealthUnreachable
	}
	return model.HealthReachable
}

func (st *ciliumHealthReader) line(l *text.Line) {
	t := l.Trimmed
	f := l.Fields()
	indented := strings.HasPrefix(l.Text(), " ") || strings.HasPrefix(l.Text(), "\t")
	switch {
	case strings.HasPrefix(t, "Cluster health:"):
		st.table, st.nodes, st.cur, st.path = true, false, -1, nil
		return
	case t == "Nodes:":
		st.table, st.nodes, st.cur, st.path = false, true, -1, nil
		return
	case ciliumHealthHeader(f):
		st.table = true
		return
	case t == "...":
		return // the table cut at its line limit
	}
	if name, local := ciliumPeerName(strings.TrimSuffix(t, ":")); indented && strings.HasSuffix(t, ":") && name != "" &&
		(st.table || st.nodes) && !strings.Contains(t, "connectivity") {
		// A node's block of probes: "  kind-worker (localhost):".
		st.out = append(st.out, model.CiliumNodeHealth{Node: l.Node, Peer: name, Local: local, Pos: l.Pos()})
		st.cur, st.path, st.nodes = len(st.out)-1, nil, true
		return
	}
	if st.nodes && st.cur >= 0 && indented {
		st.probeLine(l, t)
		return
	}
	if st.table && len(f) >= 4 {
		host, ok1 := ciliumReach(f[len(f)-2])
		ep, ok2 := ciliumReach(f[len(f)-1])
		ip, ok3 := ciliumAddr(f[len(f)-3])
		if name, local := ciliumPeerName(strings.Join(f[:len(f)-3], " ")); ok1 && ok2 && ok3 && name != "" {
			st.out = append(st.out, model.CiliumNodeHealth{Node: l.Node, Peer: name, Local: local, IP: ip, Host: host,
				Endpoint: ep, Pos: l.Pos()})
			return
		}
	}
	switch {
	case !indented:
		// Another section of cilium status ("Encryption: Disabled").
		st.table, st.nodes, st.cur, st.path = false, false, -1, nil
	case st.table:
		l.Syntax(fmt.Errorf("expected a row of cilium's Cluster health table, a node's name, its address and two "+
			"of reachable, unreachable, unknown, true or false (\"kind-worker 172.18.0.2 reachable unreachable\"), "+
			"got %q", t))
	}
}

// probeLine reads a line of a node's block: a path's address, or a probe.
func (st *ciliumHealthReader) probeLine(l *text.Line, t string) {
	n := &st.out[st.cur]
	if before, addr, ok := strings.Cut(t, " connectivity to "); ok && strings.HasSuffix(addr, ":") {
		p := &ciliumPath{secondary: strings.HasPrefix(before, "Secondary")}
		switch strings.TrimPrefix(before, "Secondary ") {
		case "Host":
			p.host = true
		case "Endpoint":
		case "Secondary":
			// Cilium 1.x before 1.14: a secondary address under the
			// path it is of.
			if st.path == nil {
				l.Syntax(fmt.Errorf("expected a secondary address under a Host or Endpoint path, got %q", t))
				return
			}
			p.host = st.path.host
		default:
			l.Syntax(fmt.Errorf("expected \"Host connectivity to ADDRESS:\" or \"Endpoint connectivity to "+
				"ADDRESS:\", got %q", t))
			return
		}
		a, err := netip.ParseAddr(strings.TrimSuffix(addr, ":"))
		if err != nil {
			l.Syntax(fmt.Errorf("expected an address in %q", t))
			return
		}
		if !p.secondary {
			if p.host {
				n.IP = a
			} else {
				n.EndpointIP = a
			}
		}
		st.path = p
		return
	}
	if what, ok := strings.CutSuffix(t, "nil"); ok && strings.Contains(what, "connectivity") {
		st.path = nil // "Endpoint connectivity: nil": no such path
		return
	}
	probe, result, ok := strings.Cut(t, ":")
	result = strings.TrimSpace(result)
	if !ok || st.path == nil || probe != "ICMP to stack" && probe != "HTTP to agent" || result == "" {
		l.Syntax(fmt.Errorf("expected a probe of a path (\"ICMP to stack: OK, RTT=1.2ms\", \"HTTP to agent: "+
			"...\"), got %q", t))
		return
	}
	if strings.HasPrefix(result, "OK") {
		result = "OK"
	}
	icmp, http := &n.EndpointICMP, &n.EndpointHTTP
	if st.path.host {
		icmp, http = &n.HostICMP, &n.HostHTTP
	}
	dst := http
	if probe == "ICMP to stack" {
		dst = icmp
	}
	// A secondary address's failure is its path's; its success does not
	// hide the primary's failure.
	if !st.path.secondary || *dst == "" || *dst == "OK" && result != "OK" {
		*dst = result
	}
}

func sniffCiliumHealth(_ string, head []byte) int {
	if !text.IsText(head) {
		return 0
	}
	health, header, probes, status := false, false, false, false
	for _, line := range text.HeadLines(head, 400) {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "Cluster health:"):
			health = true
		case ciliumHealthHeader(strings.Fields(t)):
			header = true
		case strings.HasPrefix(t, "ICMP to stack:") || strings.HasPrefix(t, "HTTP to agent:"):
			probes = true
		case strings.HasPrefix(t, "KVStore:") || strings.HasPrefix(t, "Cilium health daemon:") ||
			strings.HasPrefix(t, "Probe time:"):
			status = true
		}
	}
	switch {
	case (health || header) && (status || probes):
		return 95
	case health && header, status && probes:
		return 90
	case probes:
		return 80
	}
	return 0
}
