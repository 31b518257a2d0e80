package report

import (
	"slices"
	"sort"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/model"
)

// NextEvidence is one command whose output the analysis lacked: a rule was
// skipped without it, a finding's cause stays undecided until it is run,
// or a rule that ran would have joined it. The commands are those of the
// collector's catalog (collect.Commands), with their exact command lines;
// a finding's Decide that the collector does not run is carried as it is,
// with an empty Command.
type NextEvidence struct {
	// Command is the catalog name of the command ("iptables-save",
	// "ss-tanpi"); empty when the command line is a finding's Decide that
	// the collector does not run.
	Command string `json:"command" yaml:"command"`
	// Shell is the exact command line to run.
	Shell string `json:"shell" yaml:"shell"`
	// Scope is where it runs: "node" (on each node, as root) or
	// "cluster" (once, with kubectl).
	Scope collect.Scope `json:"scope" yaml:"scope"`
	// Nodes are the nodes it is needed from, where known (the nodes of
	// the bundle that lack its kind, or the node a finding is about);
	// empty when the bundle does not say, or for a cluster command.
	Nodes []string `json:"nodes" yaml:"nodes"`
	// Kind is the kind of evidence its output gives; empty for a Decide
	// the collector does not run.
	Kind model.Kind `json:"kind,omitempty" yaml:"kind,omitempty"`
	// Notes say what to look for in its output, as the findings' Decide
	// put it: "on the server's node: a DROP rule or policy that matches
	// the SYNs".
	Notes []string `json:"notes" yaml:"notes"`
	// Decides lists the fingerprints of the findings whose cause it
	// decides (they are not proven, and name it, or the kind it gives
	// was missing for their rule).
	Decides []string `json:"decides" yaml:"decides"`
	// Unblocks lists the rules that were skipped for lack of its kind.
	Unblocks []string `json:"unblocks" yaml:"unblocks"`
	// Joins lists the rules that ran without its kind (one they can use,
	// or one of several they need) and would join it.
	Joins []string `json:"joins" yaml:"joins"`
	// Collected says what netmortem's collector did with this command on
	// the nodes whose manifest records it (model.Collection), in the
	// order of the nodes: a node where it ran with status 0, or where the
	// collector skipped it, is not in Nodes (it is not asked again); a
	// node where it failed is, asked again. Absent when no manifest
	// records it.
	Collected []Collected `json:"collected,omitempty" yaml:"collected,omitempty"`
}

// Collected is what netmortem's collector did with a command on one node.
type Collected struct {
	// Node is the node.
	Node string `json:"node" yaml:"node"`
	// Outcome is one of CollectedEmpty, CollectedRead, CollectedSkipped
	// and CollectedFailed.
	Outcome string `json:"outcome" yaml:"outcome"`
	// Status is the command's exit status, when it ran.
	Status int `json:"status,omitempty" yaml:"status,omitempty"`
	// Why is why the collector skipped it ("ip_vs not loaded"), for
	// CollectedSkipped.
	Why string `json:"why,omitempty" yaml:"why,omitempty"`
}

// The outcomes of a Collected.
const (
	// CollectedEmpty is a command that ran with status 0 and gave
	// nothing the rules could use: the node has no evidence of its kind.
	CollectedEmpty = "empty"
	// CollectedRead is a command that ran with status 0 and whose output
	// was read, without deciding what the entry is asked for.
	CollectedRead = "read"
	// CollectedSkipped is a command the collector did not run there (its
	// tool missing, a kernel module not loaded): running it as it is
	// cannot give the evidence.
	CollectedSkipped = "skipped"
	// CollectedFailed is a command that ran with a non-zero status: it
	// is asked again.
	CollectedFailed = "failed"
)

// Asks reports whether e asks for anything: a cluster command, a node
// command on the nodes it names, or, naming none, on every node; not when
// every node it was wanted from has it collected already (Collected) and
// none is left to ask.
func (e NextEvidence) Asks() bool {
	return e.Scope == collect.ScopeCluster || len(e.Nodes) > 0 || len(e.Collected) == 0
}

// NextEvidenceFor says which commands would bring the evidence the
// analysis res of snap lacked, deduplicated, the commands that decide a
// finding's cause first, then those that let a skipped rule run, then
// those that rules which ran would join; each group in the catalog's
// order. rules are the rules that were run: with them, the kinds each
// could use but did not get are asked for too (Joins); nil leaves those
// out. A finding counts only when its certainty is not Proven and no
// other rule's finding explains it.
func NextEvidenceFor(snap *model.Snapshot, rules []*analyzer.Rule, res analyzer.Result) []NextEvidence {
	b := newEvidenceAsk(snap)
	for _, f := range res.Findings {
		// A finding explained by another rule's has its cause proven
		// there.
		if f.Certainty == analyzer.Proven || f.ExplainedBy != "" {
			continue
		}
		node := f.Subject["node"]
		if f.Decide != "" {
			b.decide(f.Decide, node, f.Fingerprint)
		}
		if r := ruleNamed(rules, f.Rule); r != nil {
			for _, k := range ruleKinds(r) {
				if !b.has(k) {
					b.kind(k, node, func(e *NextEvidence) { e.Decides = appendNew(e.Decides, f.Fingerprint) })
				}
			}
		}
	}
	skipped := map[string]bool{}
	for _, s := range res.Skipped {
		skipped[s.Rule] = true
		for _, k := range append(slices.Clone(s.Missing), s.AnyOf...) {
			b.kind(k, "", func(e *NextEvidence) { e.Unblocks = appendNew(e.Unblocks, s.Rule) })
		}
	}
	for _, r := range rules {
		if r == nil || skipped[r.Name] {
			continue
		}
		for _, k := range ruleKinds(r) {
			if !b.has(k) || (nodeKind(k) && len(b.lacking(k)) > 0) {
				b.kind(k, "", func(e *NextEvidence) { e.Joins = appendNew(e.Joins, r.Name) })
			}
		}
	}
	return b.list()
}

// ruleKinds are the kinds r needs or uses.
func ruleKinds(r *analyzer.Rule) []model.Kind {
	return slices.Concat(r.Needs, r.NeedsAny, r.Uses)
}

// nodeKind reports whether a command run on the nodes gives kind k.
func nodeKind(k model.Kind) bool {
	return slices.ContainsFunc(collect.ForKind(k), func(c collect.Command) bool { return c.Scope == collect.ScopeNode })
}

func ruleNamed(rules []*analyzer.Rule, name string) *analyzer.Rule {
	for _, r := range rules {
		if r != nil && r.Name == name {
			return r
		}
	}
	return nil
}

// evidenceAsk gathers the entries of NextEvidenceFor.
type evidenceAsk struct {
	// kinds are the kinds read, and the nodes each was read from.
	kinds map[model.Kind]map[string]bool
	// nodes are the nodes of the bundle: those its inputs and its
	// collector's manifests name.
	nodes []string
	// collections are the collector's manifests, by node.
	collections map[string]*model.Collection
	entries     map[string]*NextEvidence
	order       []string
}

func newEvidenceAsk(snap *model.Snapshot) *evidenceAsk {
	b := &evidenceAsk{kinds: map[model.Kind]map[string]bool{}, entries: map[string]*NextEvidence{},
		collections: map[string]*model.Collection{}}
	if snap == nil {
		return b
	}
	nodes := map[string]bool{}
	for _, in := range snap.Inputs {
		if in.Skipped != "" || in.Kind == "" {
			continue
		}
		if b.kinds[in.Kind] == nil {
			b.kinds[in.Kind] = map[string]bool{}
		}
		b.kinds[in.Kind][in.Node] = true
		if in.Node != "" {
			nodes[in.Node] = true
		}
	}
	// A static pod manifest is read as a Pod (kind kube), but the
	// components' command lines it holds are what components evidence
	// gives: its node has them.
	for _, c := range snap.Components {
		if b.kinds[model.KindComponents] == nil {
			b.kinds[model.KindComponents] = map[string]bool{}
		}
		b.kinds[model.KindComponents][c.Node] = true
	}
	for i := range snap.Collections {
		c := &snap.Collections[i]
		if c.Node != "" {
			b.collections[c.Node] = c
			nodes[c.Node] = true
		}
	}
	for n := range nodes {
		b.nodes = append(b.nodes, n)
	}
	sort.Strings(b.nodes)
	return b
}

func (b *evidenceAsk) has(k model.Kind) bool { return len(b.kinds[k]) > 0 }

// lacking returns the nodes of the bundle without an input of kind k, for
// a kind that node commands give.
func (b *evidenceAsk) lacking(k model.Kind) []string {
	var out []string
	for _, n := range b.nodes {
		if !b.kinds[k][n] {
			out = append(out, n)
		}
	}
	return out
}

// kind adds the catalog's commands for k, on node (or on the nodes that
// lack k when node is empty), and calls why on each entry.
func (b *evidenceAsk) kind(k model.Kind, node string, why func(*NextEvidence)) {
	for _, c := range collect.AskFor(k) {
		e := b.entry(c.Name, c.Shell, c.Scope, k)
		if c.Scope == collect.ScopeNode {
			nodes := []string{node}
			if node == "" {
				nodes = b.lacking(k)
			}
			for _, n := range nodes {
				b.askNode(e, n)
			}
		}
		why(e)
	}
}

// askNode asks for e's command on node, unless the collector's manifest
// of that node says it ran there with status 0 or was skipped there: then
// e says so in Collected instead. A command that failed there is asked
// again, and Collected says it failed.
func (b *evidenceAsk) askNode(e *NextEvidence, node string) {
	if node == "" {
		return
	}
	if c := b.collections[node]; c != nil && e.Command != "" {
		r, ok := c.RanCommand(e.Command)
		if !ok {
			r, ok = coveredRun(c, e.Command)
		}
		if ok {
			switch {
			case r.Status != 0:
				e.Collected = addCollected(e.Collected, Collected{Node: node, Outcome: CollectedFailed, Status: r.Status})
			case e.Kind != "" && b.kinds[e.Kind][node]:
				e.Collected = addCollected(e.Collected, Collected{Node: node, Outcome: CollectedRead})
				return
			default:
				e.Collected = addCollected(e.Collected, Collected{Node: node, Outcome: CollectedEmpty})
				return
			}
		} else if sk, ok := c.SkippedCommand(e.Command); ok {
			e.Collected = addCollected(e.Collected, Collected{Node: node, Outcome: CollectedSkipped, Why: sk.Why})
			return
		}
	}
	e.Nodes = appendNew(e.Nodes, node)
}

// coveredRun returns how the command name ran on c's node when the
// collector skipped it as covered by others (iptables-save by
// iptables-legacy-save and iptables-nft-save): as if it ran, with the
// first non-zero status of those; false when one of them did not run.
func coveredRun(c *model.Collection, name string) (model.CollectedRun, bool) {
	sk, skipped := c.SkippedCommand(name)
	cmd, _ := collect.Lookup(name)
	if !skipped || !strings.HasPrefix(sk.Why, "covered by ") || len(cmd.CoveredBy) == 0 {
		return model.CollectedRun{}, false
	}
	out := model.CollectedRun{Name: name}
	for _, cov := range cmd.CoveredBy {
		r, ok := c.RanCommand(cov)
		if !ok {
			return model.CollectedRun{}, false
		}
		if out.Status == 0 {
			out.Status = r.Status
		}
	}
	return out, true
}

// addCollected adds c to l unless l has its node already.
func addCollected(l []Collected, c Collected) []Collected {
	if slices.ContainsFunc(l, func(o Collected) bool { return o.Node == c.Node }) {
		return l
	}
	return append(l, c)
}

// decide adds a finding's Decide: the catalog command it is (its exact
// command line, alone or followed by a note in parentheses), or another
// command line, its note in parentheses apart.
func (b *evidenceAsk) decide(decide, node, fingerprint string) {
	var e *NextEvidence
	command, note := decideParts(decide)
	if c, ok := catalogCommand(command); ok {
		var k model.Kind
		if len(c.Kinds) > 0 {
			k = c.Kinds[0]
		}
		e = b.entry(c.Name, c.Shell, c.Scope, k)
		if note != "" {
			e.Notes = appendNew(e.Notes, note)
		}
	} else {
		command = oneLine(command)
		scope := collect.ScopeNode
		if strings.HasPrefix(command, "kubectl ") {
			scope = collect.ScopeCluster
		}
		e = b.entry("", command, scope, "")
		e.Notes = appendNew(e.Notes, note)
	}
	if e.Scope == collect.ScopeNode {
		b.askNode(e, node)
	}
	e.Decides = appendNew(e.Decides, fingerprint)
}

// catalogCommand returns the catalog command whose command line decide
// is, alone or followed by a space and a note.
func catalogCommand(decide string) (collect.Command, bool) {
	for _, c := range collect.Commands {
		if decide == c.Shell || strings.HasPrefix(decide, c.Shell+" (") {
			return c, true
		}
	}
	return collect.Command{}, false
}

func (b *evidenceAsk) entry(name, shell string, scope collect.Scope, k model.Kind) *NextEvidence {
	key := name
	if key == "" {
		key = "\x00" + shell
	}
	if e, ok := b.entries[key]; ok {
		return e
	}
	e := &NextEvidence{Command: name, Shell: shell, Scope: scope, Kind: k,
		Nodes: []string{}, Notes: []string{}, Decides: []string{}, Unblocks: []string{}, Joins: []string{}}
	b.entries[key] = e
	b.order = append(b.order, key)
	return e
}

// list returns the entries: those that decide a finding first, then those
// that unblock a rule, then the others; within each, catalog commands in
// the catalog's order, then the other commands in the order met.
func (b *evidenceAsk) list() []NextEvidence {
	rank := func(e *NextEvidence) int {
		switch {
		case len(e.Decides) > 0:
			return 0
		case len(e.Unblocks) > 0:
			return 1
		}
		return 2
	}
	catalog := map[string]int{}
	for i, c := range collect.Commands {
		catalog[c.Name] = i
	}
	pos := func(key string) int {
		if i, ok := catalog[key]; ok {
			return i
		}
		return len(catalog) + slices.Index(b.order, key)
	}
	keys := slices.Clone(b.order)
	sort.SliceStable(keys, func(i, j int) bool {
		ei, ej := b.entries[keys[i]], b.entries[keys[j]]
		if ri, rj := rank(ei), rank(ej); ri != rj {
			return ri < rj
		}
		return pos(keys[i]) < pos(keys[j])
	})
	out := make([]NextEvidence, 0, len(keys))
	for _, k := range keys {
		e := *b.entries[k]
		sort.Strings(e.Nodes)
		e.Collected = slices.Clone(e.Collected)
		slices.SortStableFunc(e.Collected, func(a, b Collected) int { return strings.Compare(a.Node, b.Node) })
		out = append(out, e)
	}
	return out
}

func appendNew(l []string, s string) []string {
	if s == "" || slices.Contains(l, s) {
		return l
	}
	return append(l, s)
}
