package rules

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/model"
)

// IPTablesBackendSplit finds nodes whose netfilter rules live in both
// iptables backends, legacy and nft.
var IPTablesBackendSplit = &analyzer.Rule{
	Name:        "iptables-backend-split",
	Severity:    analyzer.Warning,
	Needs:       []model.Kind{model.KindNetfilter},
	SubjectKeys: []string{"node", "component"},
	Run:         runIPTablesBackendSplit,
	Explains:    []*analyzer.Rule{ServiceRuleShadowed},
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(40)},
	Proof: "dumps of both backends of one node that each hold rules (iptables-legacy-save and " +
		"iptables-nft-save, or nft list ruleset), each known by its header, its command or its format, or else " +
		"by a file name that names a tool of one backend (iptables-legacy-worker-1.txt); a dump the bundle ties " +
		"to no node is the node its file name names",
	Unproven: "when only iptables-nft's \"iptables-legacy tables present\" warning shows the legacy " +
		"backend, an info finding says the legacy tables exist but not what they hold, and asks for " +
		"iptables-legacy-save; when nothing ties the two dumps to one node (no node name, no warning, " +
		"two files), an info finding of unknown cause; legacy tables without rules are silent",
	Doc: `iptables rules in both the legacy and the nft backend

Since iptables 1.8 one node can hold rules in two places: the legacy
x_tables interface (iptables-legacy) and nf_tables (iptables-nft, nft). The
kernel runs both: a packet goes through the chains of each at every hook, but
each iptables binary shows only its own. When kube-proxy writes its Service
rules with one backend and a CNI agent, the host firewall or a leftover of an
older kube-proxy writes with the other, a rule that one listing shows can be
overridden by one that only the other shows: a DROP policy, a stale DNAT, a
MASQUERADE missing on one side.

Evidence: iptables-save dumps of both backends (the header says which:
"iptables-nft-save" or "(nf_tables)" is nft), the command at a prompt
(iptables-legacy-save, iptables-nft -S), nft listings, and iptables-nft's
warning "iptables-legacy tables present"; when the content does not say
(a dump without its header, a listing), a file name that names the tool
of one backend (iptables-legacy-worker-1.txt). A dump the bundle ties to
no node belongs to the node its file name names. netmortem names who owns the rules
of each backend by their chains (KUBE- for kube-proxy, cali- for Calico,
CILIUM for Cilium, DOCKER, ufw-, ...).

Severity: warning (the split is shown; what it breaks needs the traffic);
info when only the warning line shows that legacy tables exist.

Fix: run every component with the host's backend (iptables -V prints "(legacy)"
or "(nf_tables)"; check it on the host and in kube-proxy's and the CNI agent's
containers; images built with iptables-wrapper follow the backend that already
holds rules), then flush the other backend's tables (iptables-legacy -t nat -F
and -X, and the same for each table) and restart the components that own
rules there, so they write them again in the right one.`,
}

// backendDumps is what one node's dumps show of one backend.
type backendDumps struct {
	dumps  []*model.Ruleset
	rules  int
	owners map[string]int // rules per owner
	drops  []string       // built-in chains with a DROP policy: "filter FORWARD"
	dropAt []model.Pos    // where each of drops is declared
	// firsts are the first rule of each owner, up to maxGroupEvidence
	// owners, in the order of the dumps.
	firsts []analyzer.Evidence
	seen   map[string]bool // the owners of firsts
	// counted says a rule's counters are shown; matched that one counted
	// a packet.
	counted, matched bool
}

func (b *backendDumps) holds() bool { return b.rules > 0 || len(b.drops) > 0 }

// ownerList names the owners of the backend's rules, most rules first.
func (b *backendDumps) ownerList() []string {
	names := make([]string, 0, len(b.owners))
	for o := range b.owners {
		names = append(names, o)
	}
	slices.SortFunc(names, func(x, y string) int {
		return cmp.Or(cmp.Compare(b.owners[y], b.owners[x]), cmp.Compare(x, y))
	})
	return names
}

func (b *backendDumps) describe() string {
	var parts []string
	for _, o := range b.ownerList() {
		parts = append(parts, fmt.Sprintf("%s %d", o, b.owners[o]))
	}
	s := fmt.Sprintf("%d %s (%s)", b.rules, plural(b.rules, "rule", "rules"), strings.Join(parts, ", "))
	if len(b.drops) > 0 {
		s += ", DROP policy on " + strings.Join(b.drops, ", ")
	}
	return s
}

func runIPTablesBackendSplit(p *analyzer.Pass) error {
	type node struct {
		name        string
		legacy, nft backendDumps
		warning     model.Pos
	}
	var nodes []*node
	byName := map[string]*node{}
	for _, rs := range p.Snap.Netfilter {
		if rs.Backend == "" {
			continue
		}
		name := rs.Node
		if name == "" {
			// A dump tied to no node whose file name names one
			// (iptables-legacy-worker-1.txt) is that node's.
			name = facts.NodeNamedByFile(p.Snap, rs.Pos.File)
		}
		n := byName[name]
		if n == nil {
			n = &node{name: name}
			byName[name] = n
			nodes = append(nodes, n)
		}
		b := &n.nft
		if rs.Backend == model.BackendLegacy {
			b = &n.legacy
		}
		addBackendDump(b, rs, rs.Backend)
		if n.warning.IsZero() {
			n.warning = rs.LegacyWarning
		}
	}
	for _, n := range nodes {
		switch {
		case n.legacy.holds() && n.nft.holds():
			p.Report(backendSplitFinding(n.name, &n.legacy, &n.nft, n.warning))
		case len(n.legacy.dumps) == 0 && !n.warning.IsZero() && n.nft.holds():
			p.Report(legacyUnseenFinding(n.name, &n.nft, n.warning))
		}
	}
	return nil
}

// addBackendDump counts the rules of rs, by owner, into b.
func addBackendDump(b *backendDumps, rs *model.Ruleset, label string) {
	if b.owners == nil {
		b.owners, b.seen = map[string]int{}, map[string]bool{}
	}
	b.dumps = append(b.dumps, rs)
	for _, t := range rs.Tables {
		for _, c := range t.Chains {
			if c.Policy == "DROP" && isBuiltinChain(c.Name) {
				b.drops = append(b.drops, strings.TrimSpace(t.Name+" "+c.Name))
				b.dropAt = append(b.dropAt, c.Pos)
			}
			for _, r := range c.Rules {
				o := ruleOwner(rs, t, c, r)
				b.rules++
				b.owners[o]++
				if !b.seen[o] && len(b.seen) < maxGroupEvidence {
					b.seen[o] = true
					b.firsts = append(b.firsts, analyzer.Evidence{Pos: r.Pos, Note: fmt.Sprintf("%s rule in %s: %s", label, c.Name, o)})
				}
				b.counted = b.counted || r.Counted
				b.matched = b.matched || r.Counted && r.Packets > 0
			}
		}
	}
}

func isBuiltinChain(name string) bool {
	switch name {
	case "PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING":
		return true
	}
	return false
}

// chainOwners names who writes chains, by the prefixes they use.
var chainOwners = []struct{ prefix, owner string }{
	{"KUBE-ROUTER", "kube-router"},
	{"KUBE-FIREWALL", "kubelet"},
	{"KUBE-KUBELET-CANARY", "kubelet"},
	{"KUBE-", "kube-proxy"},
	{"cali-", "Calico"},
	{"CILIUM", "Cilium"},
	{"FLANNEL", "Flannel"},
	{"WEAVE", "Weave Net"},
	{"ANTREA", "Antrea"},
	{"DOCKER", "Docker"},
	{"ufw", "ufw"},
	{"f2b-", "fail2ban"},
}

// ruleOwner names who wrote r: the owner of its chain, or of the chain it
// jumps to from a built-in chain; "kube-proxy" for the rules of its
// nftables table; "other" when the names say nothing.
func ruleOwner(rs *model.Ruleset, t *model.Table, c *model.Chain, r *model.Rule) string {
	if rs.Format == "nft" {
		switch t.Name {
		case "kube-proxy":
			return "kube-proxy"
		case "firewalld":
			return "firewalld"
		}
		if strings.HasPrefix(t.Name, "cilium") {
			return "Cilium"
		}
	}
	for _, name := range []string{c.Name, r.Target} {
		for _, o := range chainOwners {
			if strings.HasPrefix(name, o.prefix) {
				return o.owner
			}
		}
	}
	return "other"
}

// backendEvidence cites where a backend's dumps start and the first rule of
// each owner.
func backendEvidence(b *backendDumps, label string) []analyzer.Evidence {
	var ev []analyzer.Evidence
	for _, rs := range b.dumps {
		ev = append(ev, analyzer.Evidence{Pos: rs.Pos, Note: label + " dump"})
	}
	for i, at := range b.dropAt {
		ev = append(ev, analyzer.Evidence{Pos: at, Note: fmt.Sprintf("%s: %s policy DROP", label, b.drops[i])})
	}
	return append(ev, b.firsts...)
}

func backendSplitFinding(node string, legacy, nft *backendDumps, warning model.Pos) analyzer.Finding {
	lo, no := legacy.ownerList(), nft.ownerList()
	title := fmt.Sprintf("iptables rules in both backends on %s: %s in legacy, %s in nft",
		nodeName(node), listUpTo(lo, 2, false), listUpTo(no, 2, false))
	if legacy.owners["kube-proxy"] > 0 && nft.owners["kube-proxy"] > 0 {
		title = fmt.Sprintf("kube-proxy's rules in both iptables backends on %s", nodeName(node))
	}
	ev := append(backendEvidence(legacy, "legacy"), backendEvidence(nft, "nft")...)
	if !warning.IsZero() {
		ev = append(ev, analyzer.Evidence{Pos: warning, Note: "iptables-nft: legacy tables present"})
	}
	supports := []string{
		fmt.Sprintf("the legacy backend holds %s (%s)", legacy.describe(), legacy.dumps[0].Pos),
		fmt.Sprintf("the nft backend holds %s (%s)", nft.describe(), nft.dumps[0].Pos),
	}
	summary := fmt.Sprintf("On %s the legacy backend holds %s and the nft backend %s. The kernel runs both at "+
		"every hook, while iptables-legacy and iptables-nft each list only their own.",
		nodeName(node), legacy.describe(), nft.describe())
	facts := map[string]any{
		"legacy_rules":  legacy.rules,
		"nft_rules":     nft.rules,
		"legacy_owners": lo,
		"nft_owners":    no,
	}
	var contradicts []string
	f := analyzer.Finding{Severity: analyzer.Warning, Certainty: analyzer.Likely, Subject: subject("node", node, "component", "iptables")}
	if node == "" && warning.IsZero() && !sameFile(legacy, nft) {
		// Nothing says the two dumps are of one node, and iptables-nft,
		// which warns when legacy tables exist, did not.
		f.Severity, f.Certainty = analyzer.Info, analyzer.Unknown
		title = "iptables dumps of both backends, not shown to be of one node"
		summary = fmt.Sprintf("A dump of the legacy backend holds %s and one of the nft backend %s; nothing in "+
			"the bundle shows they are of one node.", legacy.describe(), nft.describe())
		contradicts = append(contradicts, "iptables-nft's dump does not warn that legacy tables are present, as it does "+
			"where they are (unless its standard error was not kept)")
		f.Alternatives = []string{"dumps of two nodes, or of one node at two times", "one node's two backends, " +
			"the nft dump's standard error not kept"}
		f.Decide = "# on the same node\niptables-legacy-save; iptables-nft-save 2>&1"
	}
	if legacy.owners["kube-proxy"] > 0 && nft.owners["kube-proxy"] > 0 {
		summary += " kube-proxy's chains are in both: one set is left over from a kube-proxy that used the other " +
			"backend, and its Service rules still apply."
		facts["kube_proxy_in_both"] = true
	}
	if len(legacy.drops) > 0 || len(nft.drops) > 0 {
		facts["drop_policies"] = append(slices.Clone(legacy.drops), nft.drops...)
	}
	if legacy.counted && !legacy.matched {
		contradicts = append(contradicts, "the legacy rules' counters are all zero: no packet has matched them yet")
	}
	if nft.counted && !nft.matched {
		contradicts = append(contradicts, "the nft rules' counters are all zero: no packet has matched them yet")
	}
	f.Title, f.Summary = title, summary
	f.Cause = "Components on the node run iptables binaries of different backends (a container image's " +
		"iptables and the host's, or an older kube-proxy's), so each writes its rules where only the " +
		"tools of its backend show them."
	f.Fix = "Run every component with the host's backend (iptables -V on the host and in kube-proxy's and " +
		"the CNI agent's containers), flush the other backend's tables, and restart the components " +
		"that owned rules there."
	if f.Decide == "" {
		f.Decide = "# on the host, and in kube-proxy's and the CNI agent's containers\niptables -V"
	}
	f.Supports, f.Contradicts, f.Facts = supports, contradicts, facts
	f.Evidence = dedupEvidence(ev)
	return f
}

// sameFile says whether both backends were dumped into one file.
func sameFile(a, b *backendDumps) bool {
	for _, x := range a.dumps {
		for _, y := range b.dumps {
			if x.Pos.File == y.Pos.File {
				return true
			}
		}
	}
	return false
}

func legacyUnseenFinding(node string, nft *backendDumps, warning model.Pos) analyzer.Finding {
	ev := append([]analyzer.Evidence{{Pos: warning, Note: "iptables-nft: legacy tables present"}}, backendEvidence(nft, "nft")...)
	return analyzer.Finding{
		Subject:   subject("node", node, "component", "iptables"),
		Severity:  analyzer.Info,
		Certainty: analyzer.Unknown,
		Title:     fmt.Sprintf("iptables-legacy tables on %s, not in the bundle, beside the nft rules", nodeName(node)),
		Summary: fmt.Sprintf("iptables-nft warned that legacy tables are present on %s, beside the nft backend's %s. "+
			"The bundle has no dump of the legacy backend, so whether its tables hold rules is not known.",
			nodeName(node), nft.describe()),
		Cause: "Not established: the legacy tables may be empty (a module that loaded them) or hold rules " +
			"another component wrote with iptables-legacy, which the kernel runs too.",
		Supports:     []string{fmt.Sprintf("iptables-nft's warning (%s)", warning)},
		Alternatives: []string{"legacy tables holding rules of another component or an older kube-proxy", "empty legacy tables"},
		Decide:       "iptables-legacy-save",
		Facts:        map[string]any{"nft_rules": nft.rules, "nft_owners": nft.ownerList()},
		Evidence:     dedupEvidence(ev),
	}
}
