package main

import (
	"cmp"
	"fmt"
	"io"
	"net/netip"
	"path"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/model"
)

// natTrace is the walk of the probe through one ruleset, and the other
// dumps of the same node's table that give the same destinations (an
// iptables-save and an iptables -L of one node): walked once.
type natTrace struct {
	rs    *model.Ruleset
	tr    *dataplane.Trace
	same  []string // the files of the other dumps
	group string   // the node, or the folder of a dump without one
}

// formatRank orders the dumps of one table: the most complete first.
var formatRank = []string{"iptables-save", "nft", "iptables-S", "iptables-list"}

// mergeTraces keeps one trace per node, family and backend: the most complete
// dump's, the others that end up in the same destinations named in its
// same; a dump whose destinations differ keeps a trace of its own.
func mergeTraces(in []natTrace) []natTrace {
	var out []natTrace
	order := slices.Clone(in)
	slices.SortStableFunc(order, func(a, b natTrace) int {
		return rank(a.rs.Format) - rank(b.rs.Format)
	})
	for _, t := range order {
		i := slices.IndexFunc(out, func(o natTrace) bool {
			return o.group == t.group && o.rs.Family == t.rs.Family && o.tr.Hook == t.tr.Hook && sameBackend(o.rs, t.rs) &&
				sameDestinations(o.tr, t.tr)
		})
		if i < 0 {
			out = append(out, t)
			continue
		}
		out[i].same = append(out[i].same, t.rs.Pos.File)
	}
	// Back in the bundle's order.
	slices.SortStableFunc(out, func(a, b natTrace) int {
		return slices.IndexFunc(in, func(t natTrace) bool { return t.rs == a.rs }) -
			slices.IndexFunc(in, func(t natTrace) bool { return t.rs == b.rs })
	})
	return out
}

func rank(format string) int {
	if i := slices.Index(formatRank, format); i >= 0 {
		return i
	}
	return len(formatRank)
}

// traceGroup is what says which node a ruleset is of: its node, or else
// the folder its file is in.
func traceGroup(rs *model.Ruleset) string {
	if rs.Node != "" {
		return "node " + rs.Node
	}
	return "folder " + path.Dir(rs.Pos.File)
}

// sameBackend reports whether a and b may be dumps of one table: not the
// legacy and the nft tables of a node (iptables-backend-split), which the
// kernel both walks.
func sameBackend(a, b *model.Ruleset) bool {
	return a.Backend == b.Backend || a.Backend == "" || b.Backend == ""
}

func sameDestinations(a, b *dataplane.Trace) bool {
	return slices.EqualFunc(a.Destinations, b.Destinations, func(x, y dataplane.Destination) bool {
		return x.Addr == y.Addr && x.Verdict == y.Verdict && x.Translated == y.Translated &&
			fmt.Sprintf("%.4f", x.Probability) == fmt.Sprintf("%.4f", y.Probability)
	})
}

// serviceEndpoints is what the bundle's Endpoints (or EndpointSlices) say
// of the Service the probe's destination is: its ready endpoints, the
// Service's name and the object's position; ok is false when the bundle
// has no Service with that address and port, or no Endpoints for it.
type serviceEndpoints struct {
	name  string
	set   facts.EndpointSet
	pos   model.Pos
	found bool
}

// endpointsFor finds the Service port the probe goes to (a cluster,
// external or load balancer IP and its port, or a NodePort on a node's own
// address), and its endpoints in snap.
func endpointsFor(snap *model.Snapshot, probe dataplane.Probe) serviceEndpoints {
	for i := range snap.Kube.Services {
		svc := &snap.Kube.Services[i]
		ips := append([]string{svc.Spec.ClusterIP}, svc.Spec.ClusterIPs...)
		ips = append(ips, svc.Spec.ExternalIPs...)
		for _, in := range svc.Status.LoadBalancer.Ingress {
			ips = append(ips, in.IP)
		}
		byIP := slices.Contains(ips, probe.Dst.Addr().String())
		for _, p := range svc.Spec.Ports {
			port := byIP && uint16(p.Port) == probe.Dst.Port() || probe.Local && p.NodePort != 0 && uint16(p.NodePort) == probe.Dst.Port()
			if !port || !strings.EqualFold(cmp.Or(string(p.Protocol), "TCP"), probe.Proto) {
				continue
			}
			eps := facts.ServiceEndpoints.Get(analyzer.NewFactSet(snap))
			set, pos, found := eps.Of(svc.Namespace, svc.Name, p.Name)
			name := svc.Namespace + "/" + svc.Name
			if p.Name != "" {
				name += ":" + p.Name
			}
			return serviceEndpoints{name: name, set: set, pos: pos, found: found}
		}
	}
	return serviceEndpoints{}
}

// stale says why DNAT target d is stale: the Endpoints of the Service do
// not list it; "" when they do, or when the bundle does not say.
func (se serviceEndpoints) stale(d dataplane.Destination) string {
	if !se.found || !d.Translated || d.Verdict != "" {
		return ""
	}
	ap, err := netip.ParseAddrPort(d.Addr)
	if err != nil {
		return ""
	}
	// Addrs has an IP alone when the objects do not give the port.
	if slices.Contains(se.set.Addrs, ap.String()) || slices.Contains(se.set.Addrs, ap.Addr().String()) {
		return ""
	}
	return fmt.Sprintf("stale: not among the ready endpoints of %s at %s", se.name, se.pos)
}

// writeTrace writes the walk of the probe through one ruleset, its
// positions relative to root (when not empty), each destination followed
// by what stale says of it (when not empty). Fitted to a width (> 0), the
// positions in the ruleset's own file, which the heading names, are its
// line numbers, and a step too wide is wrapped under its chain.
func writeTrace(w io.Writer, t natTrace, probe dataplane.Probe, stale []string, root string, width int) {
	rel := func(p model.Pos) string {
		if width > 0 && p.File == t.rs.Pos.File && p.Line > 0 {
			return fmt.Sprintf("line %d", p.Line) // of the file the heading names
		}
		return relPos(p, root)
	}
	tr := t.tr
	who := "a client"
	if probe.Output {
		who = "the node"
	}
	if probe.Src.IsValid() {
		who = probe.Src.String()
	}
	file := relPath(t.rs.Pos.File, root)
	where := file
	if tr.Node != "" {
		where = "node " + tr.Node + " (" + file + ")"
	}
	hook := "nat " + tr.Hook
	if tr.Format == "nft" {
		hook = "nftables hooks " + tr.Hook
	}
	escape.Fprintf(w, "%s: %s connection from %s to %s, %s\n", where, probe.Proto, who, probe.Dst, hook)
	for _, s := range t.same {
		escape.Fprintf(w, "  (%s holds the same table: the same destinations)\n", relPath(s, root))
	}
	for _, s := range tr.Steps {
		prefix := fmt.Sprintf("  %s%-7s %s  ", strings.Repeat("  ", s.Depth), escape.String(dataplane.Percent(s.Probability)),
			escape.String(rel(s.Rule.Pos)))
		body := escape.String(s.Chain) + ": " + escape.String(s.Note)
		if width <= 0 || fit.Width(prefix+body) <= width || fit.Width(prefix) > width/2 {
			fmt.Fprintf(w, "%s%s\n", prefix, body)
			continue
		}
		for _, l := range fit.Indent(prefix, body, width) {
			fmt.Fprintln(w, l)
		}
	}
	fmt.Fprintln(w, "  destinations:")
	if len(tr.Destinations) == 0 {
		fmt.Fprintln(w, "    none: every path ends without a verdict")
	}
	for i, d := range tr.Destinations {
		how := "not translated"
		switch {
		case d.Verdict == "REJECT":
			how = "rejected at " + rel(d.Pos)
		case d.Verdict != "":
			how = "dropped at " + rel(d.Pos)
		case d.Translated:
			how = "DNAT at " + rel(d.Pos)
		}
		escape.Fprintf(w, "    %-22s %7s  %s via %s\n", d.Addr, dataplane.Percent(d.Probability), how, strings.Join(d.Via, " > "))
		if i < len(stale) && stale[i] != "" {
			escape.Fprintf(w, "      %s\n", relText(stale[i], root))
		}
	}
	for _, u := range tr.Unknown {
		escape.Fprintf(w, "  assumed: %s\n", u)
	}
	fmt.Fprintln(w)
}

// commonDir is the folder all of files are in (the longest common
// one); "" when they share none.
func commonDir(files []string) string {
	root := ""
	for i, f := range files {
		d := path.Dir(f)
		if i == 0 {
			root = d
			continue
		}
		for root != "" && root != "." && d != root && !strings.HasPrefix(d, root+"/") {
			if root == "/" {
				return ""
			}
			root = path.Dir(root)
		}
	}
	if root == "." || root == "/" {
		return ""
	}
	return root
}

// relPath is file relative to root, when root is not empty and holds it.
func relPath(file, root string) string {
	if root == "" {
		return file
	}
	if r, ok := strings.CutPrefix(file, root+"/"); ok {
		return r
	}
	return file
}

func relPos(p model.Pos, root string) string {
	p.File = relPath(p.File, root)
	return p.String()
}

// relText is s with root's paths made relative.
func relText(s, root string) string {
	if root == "" {
		return s
	}
	return strings.ReplaceAll(s, root+"/", "")
}
