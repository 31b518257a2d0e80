package rules

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// NeighTableOverflow finds nodes whose neighbour (ARP, NDP) table is full.
var NeighTableOverflow = &analyzer.Rule{
	Name:        "neigh-table-overflow",
	Severity:    analyzer.Error,
	NeedsAny:    []model.Kind{model.KindLogs, model.KindNeighbors},
	Uses:        []model.Kind{model.KindSysctl},
	SubjectKeys: []string{"node", "table"},
	Run:         runNeighTableOverflow,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(250), LoadBalancer502.At(140)},
	Proof: "the kernel's \"neighbour: arp_cache: neighbor table overflow!\" line (dmesg, journalctl -k, syslog) and the " +
		"node's gc_thresh sysctls (net.ipv4.neigh.default.gc_thresh3), with no neighbour table of the node far below " +
		"them",
	Unproven: "the kernel line alone, or a neighbour table above gc_thresh3 without the kernel line, is a warning of " +
		"likely cause with the command that decides (the count against gc_thresh3, or dmesg)",
	Doc: `the kernel's neighbour table (ARP cache) overflows

The kernel keeps one neighbour entry per address it talks to on a link
(the ARP cache for IPv4, the NDP cache for IPv6). net.ipv4.neigh.default.
gc_thresh3 (1024 by default) is the hard limit; above gc_thresh2 (512) the
garbage collector runs within 5 s. When the table is full and nothing can be
collected, a new entry cannot be made: the kernel logs "neighbour:
arp_cache: neighbor table overflow!" (older kernels: "Neighbour table
overflow.") and drops the packets to that neighbour. Connections to new
peers fail now and then: kubelet's probes of local Pods, DNS, scrapes.

In a cluster the table grows with what a node talks to directly: every
node of a large flat network (a Prometheus scraping every node's
node-exporter), every Pod on the node (one veth neighbour each), Pods on
other nodes in an L2 overlay. The limit is global: entries in the Pods'
network namespaces count too.

Evidence: the kernel's overflow line; the gc_thresh sysctls; a neighbour
table (ip neigh, arp -an) or its size (arp -an | wc -l).

Severity: error when the kernel's line and the node's gc_thresh sysctls
agree (and no table of the node is far below them); a warning of likely
cause from the kernel's line alone, or from a table above gc_thresh3 without
the line.

Fix: raise the thresholds above what the node needs (for instance
gc_thresh1 = 80000, gc_thresh2 = 90000, gc_thresh3 = 100000 in
/etc/sysctl.d/, and the net.ipv6 ones), and look at what makes so many
neighbours.`,
}

// neighTables are the kernel's neighbour tables by the name its overflow
// line gives them, with their sysctl prefix and their family.
var neighTables = map[string]struct{ sysctl, family string }{
	"arp_cache":   {"net.ipv4.neigh.default.", "IPv4"},
	"ndisc_cache": {"net.ipv6.neigh.default.", "IPv6"},
}

// neighOverflowTable returns the table a kernel overflow line names:
// "neighbour: arp_cache: neighbor table overflow!", "ipv4: Neighbour
// table overflow." (before 4.x, IPv4's), "" when the line is not one.
func neighOverflowTable(msg string) string {
	m := strings.ToLower(msg)
	if !strings.Contains(m, "neighbor table overflow") && !strings.Contains(m, "neighbour table overflow") {
		return ""
	}
	if strings.Contains(m, "ndisc_cache") || strings.Contains(m, "ipv6:") {
		return "ndisc_cache"
	}
	return "arp_cache"
}

// neighSize is the size of a node's neighbour table in one family: the
// entries a table lists.
type neighSize struct {
	n   int
	pos model.Pos // the last entry, or the count's line
}

// neighSizes counts the entries of the neighbour tables, by node and
// family ("IPv4", "IPv6"), one file (or count) each: the largest of a node.
func neighSizes(s *model.Snapshot) map[string]neighSize {
	perFile := map[string]neighSize{}
	for _, n := range s.Neighbors {
		fam := "IPv4"
		if n.IP.Is6() && !n.IP.Is4In6() {
			fam = "IPv6"
		}
		k := n.Node + "|" + fam + "|" + n.Pos.File
		sz := perFile[k]
		sz.n++
		sz.pos = n.Pos
		perFile[k] = sz
	}
	// Counts of listings (arp -an | wc -l) of one family; a count of
	// both families (ip neigh | wc -l) tells neither table's size.
	for _, c := range s.NeighborCounts {
		fam := map[string]string{"ipv4": "IPv4", "ipv6": "IPv6"}[c.Family]
		if fam == "" {
			continue
		}
		k := c.Node + "|" + fam + "|" + c.Pos.File + ":" + fmt.Sprint(c.Pos.Line)
		perFile[k] = neighSize{n: c.Count, pos: c.Pos}
	}
	out := map[string]neighSize{}
	for k, sz := range perFile {
		parts := strings.SplitN(k, "|", 3)
		key := parts[0] + "|" + parts[1]
		if sz.n > out[key].n {
			out[key] = sz
		}
	}
	return out
}

// neighThresholds reads a node's gc_thresh sysctls for a table.
func neighThresholds(s *model.Snapshot, node, table string) (thresh map[int]model.Sysctl) {
	thresh = map[int]model.Sysctl{}
	for i := 1; i <= 3; i++ {
		if sc, ok := s.Sysctl(node, fmt.Sprintf("%sgc_thresh%d", neighTables[table].sysctl, i)); ok {
			thresh[i] = sc
		}
	}
	return thresh
}

func runNeighTableOverflow(p *analyzer.Pass) error {
	s := p.Snap
	type key struct{ node, table string }
	lines := map[key][]model.LogEvent{}
	for _, le := range s.Logs {
		if t := neighOverflowTable(le.Message); t != "" && (le.Source == "kernel" || le.Source == "") {
			k := key{le.Node, t}
			lines[k] = append(lines[k], le)
		}
	}
	sizes := neighSizes(s)
	done := map[string]bool{}
	for _, k := range slices.SortedFunc(maps.Keys(lines), func(a, b key) int {
		return strings.Compare(a.node+"|"+a.table, b.node+"|"+b.table)
	}) {
		fam := neighTables[k.table].family
		sz, ok := sizes[k.node+"|"+fam]
		if !ok { // a table that names no node, as a sysctl that names none
			if sz, ok = sizes["|"+fam]; ok {
				done["|"+fam] = true
			}
		}
		if !ok && k.node == "" { // a node's table, when the line names no node
			for sk, v := range sizes {
				if strings.HasSuffix(sk, "|"+fam) {
					sz, ok = v, true
				}
			}
		}
		done[k.node+"|"+fam] = true
		p.Report(neighOverflowFinding(k.node, k.table, lines[k], sz, ok, neighThresholds(s, k.node, k.table)))
	}
	// Tables above gc_thresh3 without the kernel's line.
	for _, sk := range slices.Sorted(maps.Keys(sizes)) {
		if done[sk] {
			continue
		}
		node, fam, _ := strings.Cut(sk, "|")
		table := "arp_cache"
		if fam == "IPv6" {
			table = "ndisc_cache"
		}
		th := neighThresholds(s, node, table)
		limit, ok := th[3]
		if !ok {
			continue
		}
		if v, err := strconv.Atoi(limit.Value); err == nil && sizes[sk].n >= v {
			p.Report(neighOverflowFinding(node, table, nil, sizes[sk], true, th))
		}
	}
	return nil
}

// neighOverflowFinding judges a node's neighbour table from the kernel's
// overflow lines, the table's size and the thresholds, then words it.
func neighOverflowFinding(node, table string, lines []model.LogEvent, sz neighSize, haveSize bool, th map[int]model.Sysctl) analyzer.Finding {
	fam := neighTables[table].family
	prefix := neighTables[table].sysctl
	var ev []analyzer.Evidence
	var supports, contradicts []string
	for i, le := range lines {
		if i == maxGroupEvidence {
			break
		}
		ev = append(ev, analyzer.Evidence{Pos: le.Pos, Note: "kernel: neighbour: " + table + ": neighbor table overflow!"})
	}
	if len(lines) > 0 {
		supports = append(supports, fmt.Sprintf("%s: the kernel could not add a neighbour entry: %s (%d %s)",
			lines[0].Pos, strings.TrimSpace(lines[0].Message), len(lines), plural(len(lines), "line", "lines")))
	}
	values := map[string]any{"table": table}
	if len(lines) > 0 {
		values["kernel_messages"] = len(lines)
	}
	if node != "" {
		values["node"] = node
	}
	thNum := map[int]int{}
	for _, i := range []int{3, 2, 1} {
		sc, ok := th[i]
		if !ok {
			continue
		}
		values[fmt.Sprintf("gc_thresh%d", i)] = sc.Value
		ev = append(ev, analyzer.Evidence{Pos: sc.Pos, Note: sc.Name + " = " + sc.Value})
		if v, err := strconv.Atoi(sc.Value); err == nil {
			thNum[i] = v
		}
	}
	limit, haveLimit := thNum[3]
	if haveLimit {
		supports = append(supports, fmt.Sprintf("%s: %sgc_thresh3 = %d, the most entries the table may hold", th[3].Pos, prefix, limit))
	}
	if haveSize {
		values["entries"] = sz.n
		ev = append(ev, analyzer.Evidence{Pos: sz.pos, Note: fmt.Sprintf("%d %s neighbour %s", sz.n, fam, plural(sz.n, "entry", "entries"))})
		soft, haveSoft := thNum[2]
		switch {
		case haveLimit && sz.n >= limit:
			supports = append(supports, fmt.Sprintf("%s: the table holds %d entries, at or above gc_thresh3 = %d", sz.pos, sz.n, limit))
		case haveSoft && sz.n >= soft:
			supports = append(supports, fmt.Sprintf("%s: the table holds %d entries, above gc_thresh2 = %d (the garbage "+
				"collector's soft limit)", sz.pos, sz.n, soft))
		case haveSoft:
			contradicts = append(contradicts, fmt.Sprintf("%s: the table listed holds %d %s %s, below gc_thresh2 = %d: "+
				"the entries were in other network namespaces (the limit is global), or the burst was over when it was listed",
				sz.pos, sz.n, fam, plural(sz.n, "entry", "entries"), soft))
		}
	}

	// The judgement.
	c := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Likely, Supports: supports, Contradicts: contradicts}
	full := haveSize && haveLimit && sz.n >= limit
	switch {
	case len(lines) > 0 && haveLimit && len(contradicts) == 0:
		c.Severity, c.Certainty = analyzer.Error, analyzer.Proven
	case len(lines) > 0:
		c.Decide = fmt.Sprintf("# on the node: entries at the threshold prove it\n"+
			"ip -%c neigh show nud all | wc -l; sysctl %sgc_thresh3", fam[3], prefix)
		c.Alternatives = []string{"a burst of new neighbours (a scan, a scrape of every node) that the garbage collector " +
			"could not keep up with, in the node's or the Pods' namespaces"}
		if !haveLimit {
			c.Contradicts = append(c.Contradicts, "the node's gc_thresh sysctls are not in the bundle")
		}
	default: // the table above gc_thresh3, without the kernel's line
		c.Decide = "# on the node: the kernel's line proves that entries were refused\ndmesg | grep -i 'table overflow'"
		c.Contradicts = append(c.Contradicts, "no kernel \"neighbor table overflow\" line in the bundle: the garbage "+
			"collector may still be keeping up")
		c.Alternatives = []string{"a table at its limit whose stale entries the garbage collector frees in time"}
	}

	// The words.
	where := "this node"
	if node != "" {
		where = node
	}
	title := fmt.Sprintf("the %s neighbour table (%s) of %s overflows: new neighbours are refused", fam, table, where)
	var says []string
	if len(lines) > 0 {
		says = append(says, fmt.Sprintf("The kernel of %s logged \"neighbour: %s: neighbor table overflow!\" %d %s "+
			"(rate-limited: each line stands for more): it could not add a neighbour entry, and dropped the packets "+
			"to that neighbour.", where, table, len(lines), plural(len(lines), "time", "times")))
	}
	if haveSize {
		says = append(says, fmt.Sprintf("The table lists %d %s %s.", sz.n, fam, plural(sz.n, "entry", "entries")))
	}
	if haveLimit {
		says = append(says, fmt.Sprintf("%sgc_thresh3 is %d.", prefix, limit))
	}
	if full && len(lines) == 0 {
		title = fmt.Sprintf("the %s neighbour table of %s is at its limit: %d entries, gc_thresh3 = %d", fam, where, sz.n, limit)
		says = append(says, "New neighbours are refused while it is full: packets to them are dropped.")
	}
	return withFinding(c, analyzer.Finding{
		Subject: subject("node", node, "table", table),
		Title:   title,
		Summary: strings.Join(says, " ") + " Connections to new peers fail now and then: the kubelet's probes of " +
			"local Pods, DNS, scrapes.",
		Cause: fmt.Sprintf("The node talks directly to more neighbours than %sgc_thresh3 allows (every node of a large "+
			"flat network, every local Pod's veth, Pods of other nodes on an L2 overlay); entries in the Pods' "+
			"namespaces count towards the same limit.", prefix),
		Fix: fmt.Sprintf("Raise %[1]sgc_thresh1, gc_thresh2 and gc_thresh3 above what the node needs (for instance "+
			"80000, 90000 and 100000, in /etc/sysctl.d/), and the same for the other family; then look at what makes "+
			"so many neighbours.", prefix),
		Facts:    values,
		Evidence: dedupEvidence(ev),
	})
}
