package host

import (
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/internal/lazyre"
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
		"Endpoints reachable\" before Cilium 1.14: each path reachable, unreachable or unknown, true or false, or " +
		"from 1.17 the count of its addresses reachable, 1/1) with the table's sum (4/6 reachable), and per node " +
		"block of cilium-health's probes (\"Host connectivity to 10.0.0.2:\", \"ICMP to stack: OK, RTT=...\", " +
		"\"HTTP to agent: ...\"; a secondary address's failure makes its path partly reachable); each table or " +
		"listing numbered in its file; `cilium status`'s other sections are passed over",
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

// ciliumReach returns the reachability a health table's cell gives:
// reachable, unreachable or unknown (Cilium 1.14 to 1.16), true or false
// (before), or the count of a node's addresses reachable ("1/1", "0/2",
// from 1.17).
func ciliumReach(cell string) (string, bool) {
	switch cell {
	case model.HealthReachable, "true":
		return model.HealthReachable, true
	case model.HealthUnreachable, "false":
		return model.HealthUnreachable, true
	case model.HealthUnknown:
		return model.HealthUnknown, true
	}
	x, y, ok := ciliumCount(cell)
	switch {
	case !ok || y == 0:
		return "", false
	case x == y:
		return model.HealthReachable, true
	case x == 0:
		return model.HealthUnreachable, true
	}
	return model.HealthPartial, true
}

// ciliumCount reads "x/y", x at most y.
func ciliumCount(s string) (x, y int, ok bool) {
	a, b, found := strings.Cut(s, "/")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if !found || err1 != nil || err2 != nil || x < 0 || x > y {
		return 0, 0, false
	}
	return x, y, true
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

// ciliumSummaryRe is the table's sum: "Cluster health: 4/6 reachable".
var ciliumSummaryRe = lazyre.New(`^Cluster health:\s+(\d+)/(\d+) reachable`)

// ciliumHealthReader is readCiliumHealth's state.
type ciliumHealthReader struct {
	out          []model.CiliumNodeHealth
	secondary    [][2]bool // per record, whether a secondary address of its host, its endpoint failed
	table        int       // the tables and listings begun
	reach, total int       // the current table's sum
	inTable      bool      // in the Cluster health table's rows
	inNodes      bool      // in cilium-health's node blocks
	cur          int       // the node block being read, -1 before one
	path         *ciliumPath
}

// ciliumPath is the path whose probes are being read: the host's or the
// endpoint's, its primary address or a secondary one.
type ciliumPath struct {
	host, secondary bool
}

func readCiliumHealth(r io.Reader, src *format.File, errs *model.ErrorList) []model.CiliumNodeHealth {
	st := &ciliumHealthReader{cur: -1}
	text.ReadLines(r, src, errs, text.Hooks{Prompt: func(*text.Line, string) { st.end() }}, st.line)
	for i := range st.out {
		n := &st.out[i]
		n.Host = ciliumPathState(n.Host, n.HostICMP, n.HostHTTP, st.secondary[i][0])
		n.Endpoint = ciliumPathState(n.Endpoint, n.EndpointICMP, n.EndpointHTTP, st.secondary[i][1])
	}
	return st.out
}

// end ends the table or listing being read.
func (st *ciliumHealthReader) end() {
	st.inTable, st.inNodes, st.cur, st.path = false, false, -1, nil
}

// begin starts a table or listing, of the sum given (0 and 0 for none).
func (st *ciliumHealthReader) begin(reach, total int) {
	st.end()
	st.table++
	st.reach, st.total = reach, total
}

// add adds a node's record to the table being read.
func (st *ciliumHealthReader) add(n model.CiliumNodeHealth) {
	n.Table, n.Reachable, n.Total = st.table, st.reach, st.total
	st.out = append(st.out, n)
	st.secondary = append(st.secondary, [2]bool{})
}

// ciliumPathState is a path's reachability from its probes, where the
// table did not give it: its primary address's probes, then whether a
// secondary address failed.
func ciliumPathState(state, icmp, http string, secondaryFailed bool) string {
	switch {
	case state != "":
		return state
	case icmp != "" && icmp != "OK" || http != "" && http != "OK":
		return model.HealthUnreachable
	case secondaryFailed:
		return model.HealthPartial
	case icmp == "" && http == "":
		return ""
	}
	return model.HealthReachable
}

func (st *ciliumHealthReader) line(l *text.Line) {
	t := l.Trimmed
	f := l.Fields()
	indented := strings.HasPrefix(l.Text(), " ") || strings.HasPrefix(l.Text(), "\t")
	switch {
	case strings.HasPrefix(t, "Cluster health:"):
		reach, total := 0, 0
		if m := ciliumSummaryRe.FindStringSubmatch(t); m != nil {
			reach, _ = strconv.Atoi(m[1])
			total, _ = strconv.Atoi(m[2])
		}
		st.begin(reach, total)
		st.inTable = true
		return
	case strings.HasPrefix(t, "Probe time:"):
		st.begin(0, 0) // cilium-health status: its listing follows
		return
	case t == "Nodes:":
		st.inTable, st.inNodes, st.cur, st.path = false, true, -1, nil
		return
	case ciliumHealthHeader(f):
		st.inTable = true
		return
	case t == "...":
		return // the table cut at its line limit
	}
	if name, local := ciliumPeerName(strings.TrimSuffix(t, ":")); indented && strings.HasSuffix(t, ":") && name != "" &&
		(st.inTable || st.inNodes) && !strings.Contains(t, "connectivity") {
		// A node's block of probes: "  kind-worker (localhost):".
		st.add(model.CiliumNodeHealth{Node: l.Node, Peer: name, Local: local, Pos: l.Pos()})
		st.cur, st.path, st.inNodes = len(st.out)-1, nil, true
		return
	}
	if st.inNodes && st.cur >= 0 && indented {
		st.probeLine(l, t)
		return
	}
	if st.inTable {
		if n, ok := ciliumRow(f); ok {
			n.Node, n.Pos = l.Node, l.Pos()
			st.add(n)
			return
		}
	}
	switch {
	case !indented:
		st.end() // another section of cilium status ("Encryption: Disabled")
	case st.inTable:
		l.Syntax(fmt.Errorf("expected a row of cilium's Cluster health table, a node's name, its address and two "+
			"of reachable, unreachable, unknown, true, false or a count (\"kind-worker 172.18.0.2 reachable 1/1\"), "+
			"got %q", t))
	}
}

// ciliumRow reads a row of the health table: the node's name (then
// "(localhost)"), its address, its two paths, and the columns a later
// Cilium may add after them.
func ciliumRow(f []string) (model.CiliumNodeHealth, bool) {
	if len(f) < 4 {
		return model.CiliumNodeHealth{}, false
	}
	n := model.CiliumNodeHealth{Peer: f[0]}
	i := 1
	if f[1] == "(localhost)" {
		n.Local, i = true, 2
	}
	if len(f) < i+3 {
		return model.CiliumNodeHealth{}, false
	}
	ip, ok1 := ciliumAddr(f[i])
	host, ok2 := ciliumReach(f[i+1])
	ep, ok3 := ciliumReach(f[i+2])
	if !ok1 || !ok2 || !ok3 {
		return model.CiliumNodeHealth{}, false
	}
	n.IP, n.Host, n.Endpoint = ip, host, ep
	return n, true
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
			// Cilium before 1.14: a secondary address under the path it
			// is of.
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
	if st.path.secondary {
		// Another address family's: its failure is told apart from the
		// primary's.
		if result != "OK" {
			st.secondary[st.cur][btoiPath(st.path.host)] = true
		}
		return
	}
	dst := &n.EndpointHTTP
	switch {
	case st.path.host && probe == "ICMP to stack":
		dst = &n.HostICMP
	case st.path.host:
		dst = &n.HostHTTP
	case probe == "ICMP to stack":
		dst = &n.EndpointICMP
	}
	*dst = result
}

// btoiPath is the index of a path in ciliumHealthReader.secondary.
func btoiPath(host bool) int {
	if host {
		return 0
	}
	return 1
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
