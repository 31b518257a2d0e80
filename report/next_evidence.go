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
	// nodes are the nodes of the bundle: those its inputs name.
	nodes   []string
	entries map[string]*NextEvidence
	order   []string
}

func newEvidenceAsk(snap *model.Snapshot) *evidenceAsk {
	b := &evidenceAsk{kinds: map[model.Kind]map[string]bool{}, entries: map[string]*NextEvidence{}}
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
				if n != "" {
					e.Nodes = appendNew(e.Nodes, n)
				}
			}
		}
		why(e)
	}
}

// decide adds a finding's Decide: the catalog command it is (its exact
// command line, alone or followed by a note in parentheses), or another
// command line, its note in parentheses apart.
func (b *evidenceAsk) decide(decide, node, fingerprint string) {
	var e *NextEvidence
	if c, ok := catalogCommand(decide); ok {
		var k model.Kind
		if len(c.Kinds) > 0 {
			k = c.Kinds[0]
		}
		e = b.entry(c.Name, c.Shell, c.Scope, k)
		if note, ok := strings.CutPrefix(decide, c.Shell+" ("); ok {
			e.Notes = appendNew(e.Notes, strings.TrimSuffix(note, ")"))
		}
	} else {
		command, note := decideParts(decide)
		scope := collect.ScopeNode
		if strings.HasPrefix(command, "kubectl ") {
			scope = collect.ScopeCluster
		}
		e = b.entry("", command, scope, "")
		e.Notes = appendNew(e.Notes, note)
	}
	if node != "" && e.Scope == collect.ScopeNode {
		e.Nodes = appendNew(e.Nodes, node)
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
