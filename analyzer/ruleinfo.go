package analyzer

import (
	"fmt"
	"slices"
)

// Symptom is what someone sees go wrong, as they would say it ("probes
// time out"). docs/collect.md is organized by symptoms: under each, the
// rules that can explain it (those whose Symptoms name it), the evidence
// they read and the commands that give it.
type Symptom struct {
	// Name is the symptom as a user describes it.
	Name string
	// Doc says a little more about it, lower case, without a final period.
	Doc string
	// Rank orders the symptoms in docs/collect.md, lowest first.
	Rank int
}

// SymptomRef is a symptom a rule can explain.
type SymptomRef struct {
	Symptom *Symptom
	// Rank orders the rules listed under the symptom, lowest first (the
	// most telling explanation first); rules of one rank come in the
	// order of the rule list.
	Rank int
}

// At is the reference to s of a rule at rank under it.
func (s *Symptom) At(rank int) SymptomRef { return SymptomRef{Symptom: s, Rank: rank} }

// PlotPart is one kind of record a timeline draws.
type PlotPart int

// The parts of a timeline.
const (
	// PlotAttempts draws the connection attempts the finding is about
	// (Plot.Servers, Clients, ClientPorts) and those its evidence cites.
	PlotAttempts PlotPart = iota + 1
	// PlotICMP draws the ICMP errors its evidence cites, and those
	// Plot.ICMP selects.
	PlotICMP
	// PlotARP draws which MAC claimed each address over time: the
	// addresses of Plot.ARPAddrs and of the ARP packets its evidence
	// cites.
	PlotARP
	// PlotRestarts draws the restarts and probe failures of the
	// containers the finding is about.
	PlotRestarts
	// PlotLogErrors draws the errors of the logs its evidence cites
	// (and, with Plot.NodeKubeProxyErrors, kube-proxy's on its node).
	PlotLogErrors
	// PlotStaleMark marks the first failed attempt to a stale DNAT target
	// named by a finding on the same node (Plot.StaleTargets).
	PlotStaleMark
	// PlotCitedLogs draws the log lines its evidence cites.
	PlotCitedLogs
)

// defaultPlot is what a Plot without Parts draws.
var defaultPlot = []PlotPart{PlotAttempts, PlotICMP, PlotARP, PlotCitedLogs}

// ICMPMatch says which ICMP errors a timeline draws beside those the
// finding's evidence cites.
type ICMPMatch int

// The ICMP errors drawn.
const (
	// ICMPCited draws only the errors the evidence cites.
	ICMPCited ICMPMatch = iota
	// ICMPSenderKind draws too the errors of the subject's sender
	// ("from") and kind ("icmp") about its address ("address").
	ICMPSenderKind
	// ICMPTooBig draws too the frag-needed and packet-too-big errors
	// about the subject's flow ("source" to "destination").
	ICMPTooBig
)

// Selector names values of a finding: those of a key of its Subject, or
// of its Facts (a list's elements, or the one value). Exactly one of the
// two is set.
type Selector struct {
	Subject string
	Fact    string
}

// InSubject selects the value of the finding's subject key k.
func InSubject(k string) Selector { return Selector{Subject: k} }

// InFacts selects the values of the finding's fact k.
func InFacts(k string) Selector { return Selector{Fact: k} }

// String is "subject.k" or "facts.k".
func (s Selector) String() string {
	if s.Fact != "" {
		return "facts." + s.Fact
	}
	return "subject." + s.Subject
}

// Plot says how the HTML report's timeline draws a rule's findings
// (package timeline reads it). The zero Plot draws the attempts to the
// finding's subject, the ICMP errors and ARP claims its evidence cites,
// and the log lines it cites.
type Plot struct {
	// Parts are what is drawn, in order; empty: PlotAttempts, PlotICMP,
	// PlotARP, PlotCitedLogs.
	Parts []PlotPart
	// Servers, Clients and ClientPorts select the connection attempts
	// drawn, beside those the evidence cites: to a server listed, from a
	// client listed, from a client port listed. All empty: the subject's
	// address, vip and backend are the servers, its client the client,
	// and its port the port of a server given without one.
	Servers, Clients, ClientPorts []Selector
	// ServerPort is the port of the servers given without one; unused
	// when Servers, Clients and ClientPorts are all empty.
	ServerPort *Selector
	// ARPAddrs select the addresses whose ARP owners are drawn, beside
	// those of the ARP packets the evidence cites.
	ARPAddrs []Selector
	// ICMP selects the ICMP errors drawn beside those the evidence cites.
	ICMP ICMPMatch
	// NodeKubeProxyErrors draws, with PlotLogErrors, kube-proxy's errors
	// on the finding's node too: they explain a stale dataplane.
	NodeKubeProxyErrors bool
	// StaleTargets, when set, names the DNAT targets a finding of the
	// rule holds stale: the first failed attempt to one is the mark of
	// PlotStaleMark on the finding's own timeline and on those of other
	// rules' findings on its node.
	StaleTargets *Selector
}

// Draws returns the parts p draws, in order.
func (p *Plot) Draws() []PlotPart {
	if len(p.Parts) == 0 {
		return defaultPlot
	}
	return p.Parts
}

// Causality is the known cause and effect among rules: rule a leads to
// rule b when a's Explains names b or b's FollowsFrom names a, directly
// or through other rules (whether those ran or not). The verdict groups
// the findings of rules linked so.
type Causality struct {
	leads map[string]map[string]bool
}

// NewCausality derives the causality of rules and of every rule their
// edges reach.
func NewCausality(rules []*Rule) *Causality {
	next := map[*Rule][]*Rule{}
	seen := map[*Rule]bool{}
	var visit func(r *Rule)
	visit = func(r *Rule) {
		if r == nil || seen[r] {
			return
		}
		seen[r] = true
		for _, e := range r.Explains {
			if e != nil {
				next[r] = append(next[r], e)
				visit(e)
			}
		}
		for _, c := range r.FollowsFrom {
			if c != nil {
				next[c] = append(next[c], r)
				visit(c)
			}
		}
	}
	for _, r := range rules {
		visit(r)
	}
	c := &Causality{leads: map[string]map[string]bool{}}
	for r := range seen {
		reach := map[string]bool{}
		stack := slices.Clone(next[r])
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if reach[x.Name] {
				continue
			}
			reach[x.Name] = true
			stack = append(stack, next[x]...)
		}
		if len(reach) > 0 {
			c.leads[r.Name] = reach
		}
	}
	return c
}

// Leads reports whether the findings of rule a are known to bring about
// those of rule b.
func (c *Causality) Leads(a, b string) bool {
	return c != nil && c.leads[a][b]
}

// Linked reports whether rule a leads to, or follows from, rule b.
func (c *Causality) Linked(a, b string) bool {
	return a != b && (c.Leads(a, b) || c.Leads(b, a))
}

// Chained reports whether rule a leads to, or follows from, any rule.
func (c *Causality) Chained(a string) bool {
	if c == nil {
		return false
	}
	if len(c.leads[a]) > 0 {
		return true
	}
	for _, to := range c.leads {
		if to[a] {
			return true
		}
	}
	return false
}

// validateInfo checks what other packages read of r: its edges to other
// rules, its symptoms and its plot.
func validateInfo(r *Rule) []error {
	var errs []error
	for _, l := range []struct {
		field string
		rules []*Rule
	}{{"Explains", r.Explains}, {"FollowsFrom", r.FollowsFrom}} {
		for j, o := range l.rules {
			switch {
			case o == nil:
				errs = append(errs, fmt.Errorf("rule %q: %s[%d] is nil", r.Name, l.field, j))
			case o == r:
				errs = append(errs, fmt.Errorf("rule %q: %s names the rule itself", r.Name, l.field))
			case slices.Index(l.rules, o) < j:
				errs = append(errs, fmt.Errorf("rule %q: %s names %q twice", r.Name, l.field, o.Name))
			}
		}
	}
	for j, s := range r.Symptoms {
		switch {
		case s.Symptom == nil:
			errs = append(errs, fmt.Errorf("rule %q: Symptoms[%d] is nil", r.Name, j))
		case s.Symptom.Name == "" || s.Symptom.Doc == "":
			errs = append(errs, fmt.Errorf("rule %q: Symptoms[%d] has no name or no doc", r.Name, j))
		case slices.IndexFunc(r.Symptoms, func(o SymptomRef) bool { return o.Symptom == s.Symptom }) < j:
			errs = append(errs, fmt.Errorf("rule %q: Symptoms names %q twice", r.Name, s.Symptom.Name))
		}
	}
	p := &r.Plot
	for _, part := range p.Parts {
		if part < PlotAttempts || part > PlotCitedLogs {
			errs = append(errs, fmt.Errorf("rule %q: Plot: unknown part %d", r.Name, part))
		}
	}
	if p.ICMP < ICMPCited || p.ICMP > ICMPTooBig {
		errs = append(errs, fmt.Errorf("rule %q: Plot: unknown ICMP match %d", r.Name, p.ICMP))
	}
	sels := slices.Concat(p.Servers, p.Clients, p.ClientPorts, p.ARPAddrs)
	for _, s := range []*Selector{p.ServerPort, p.StaleTargets} {
		if s != nil {
			sels = append(sels, *s)
		}
	}
	for _, s := range sels {
		switch {
		case (s.Subject == "") == (s.Fact == ""):
			errs = append(errs, fmt.Errorf("rule %q: Plot: a selector sets %q and %q: want one of Subject and Fact", r.Name, s.Subject, s.Fact))
		case s.Subject != "" && len(r.SubjectKeys) > 0 && !slices.Contains(r.SubjectKeys, s.Subject):
			errs = append(errs, fmt.Errorf("rule %q: Plot selects subject key %q, which SubjectKeys does not list", r.Name, s.Subject))
		}
	}
	return errs
}

// validateCausality reports the rules of a list whose edges lead back to
// themselves.
func validateCausality(rules []*Rule) []error {
	var errs []error
	c := NewCausality(rules)
	for _, r := range rules {
		if r != nil && c.Leads(r.Name, r.Name) {
			errs = append(errs, fmt.Errorf("rule %q: Explains and FollowsFrom lead back to the rule", r.Name))
		}
	}
	return errs
}
