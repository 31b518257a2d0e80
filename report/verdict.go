package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// MaxVerdictCauses is how many causes a verdict names at most.
const MaxVerdictCauses = 3

// Verdict says first what most likely went wrong: the findings grouped by
// the root cause they appear to share, the most severe groups first, at
// most MaxVerdictCauses of them. It never claims more than the findings
// do: a cause is as certain as the finding that states it, and the
// grouping itself is an inference, said as such.
type Verdict struct {
	// Causes are the groups, most severe first.
	Causes []VerdictCause `json:"causes" yaml:"causes"`
	// Others counts the findings in no group named here (there were more
	// than MaxVerdictCauses groups); the details list them.
	Others int `json:"others" yaml:"others"`
}

// VerdictCause is one root cause: the finding that states it, and the
// findings that likely follow from it.
type VerdictCause struct {
	// Line is the verdict's sentence for this cause.
	Line string `json:"line" yaml:"line"`
	// Severity is the highest severity in the group.
	Severity analyzer.Severity `json:"severity" yaml:"severity"`
	// Certainty is the certainty of the lead finding's cause.
	Certainty analyzer.Certainty `json:"certainty" yaml:"certainty"`
	// Rule, Fingerprint and Title name the lead finding.
	Rule        string `json:"rule" yaml:"rule"`
	Fingerprint string `json:"fingerprint" yaml:"fingerprint"`
	Title       string `json:"title" yaml:"title"`
	// Related are the other findings of the group.
	Related []VerdictLink `json:"related" yaml:"related"`
}

// VerdictLink is a finding grouped under a cause, and why.
type VerdictLink struct {
	Rule        string `json:"rule" yaml:"rule"`
	Fingerprint string `json:"fingerprint" yaml:"fingerprint"`
	Title       string `json:"title" yaml:"title"`
	// Link is why it is in the group: its link to the lead finding when
	// they are linked directly, else its strongest link to another
	// finding of the group:
	// "explained-by" (the analyzer links it to a proven finding citing
	// the same evidence), "shared-evidence" (both cite one position),
	// "same-subject" (the same object or address), "same-connection"
	// (the same connection attempts, seen under another address: before
	// and after a DNAT), or "cause-family" (rules of one known chain of
	// cause and effect, on the same node).
	Link string `json:"link" yaml:"link"`
}

// Links of VerdictLink, strongest first.
const (
	LinkExplainedBy    = "explained-by"
	LinkSharedEvidence = "shared-evidence"
	LinkSameSubject    = "same-subject"
	LinkSameConnection = "same-connection"
	LinkCauseFamily    = "cause-family"
)

// NewVerdict groups findings by shared root cause and names the groups,
// most severe first. Info findings are left out: they say nothing is
// broken, and a verdict names what is. rules are the rules that ran: their Explains and
// FollowsFrom edges (analyzer.Causality) link the findings of rules known
// to follow from one another on a node, the cause leading its group;
// nil links none so. inputs give the node of each evidence file, for
// findings whose subject names none.
func NewVerdict(rules []*analyzer.Rule, findings []analyzer.Finding, inputs []model.Input) Verdict {
	v := Verdict{Causes: []VerdictCause{}}
	findings = slices.DeleteFunc(slices.Clone(findings), func(f analyzer.Finding) bool { return f.Severity <= analyzer.Info })
	n := len(findings)
	if n == 0 {
		return v
	}
	causality := analyzer.NewCausality(rules)
	nodeOfFile := map[string]string{}
	for _, in := range inputs {
		if in.Node != "" {
			nodeOfFile[in.Path] = in.Node
		}
	}
	nodes := make([][]string, n)
	for i, f := range findings {
		nodes[i] = findingNodes(f, nodeOfFile)
	}

	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	// link[i][j] is why i and j are joined, when they are directly.
	link := map[[2]int]string{}
	join := func(i, j int, why string) {
		if _, ok := link[[2]int{i, j}]; !ok {
			link[[2]int{i, j}] = why
			link[[2]int{j, i}] = why
		}
		if a, b := find(i), find(j); a != b {
			parent[max(a, b)] = min(a, b)
		}
	}
	// Each link is found through an index, not by comparing every pair,
	// except the chains of rules, which compare only their own findings.
	byName := map[string]int{}
	for i, f := range findings {
		if _, ok := byName[f.Rule+": "+f.Title]; !ok {
			byName[f.Rule+": "+f.Title] = i
		}
	}
	explains := make([]bool, n) // explains[j]: another finding is explained by j
	for i, f := range findings {
		if j, ok := byName[f.ExplainedBy]; ok && f.ExplainedBy != "" && j != i {
			join(i, j, LinkExplainedBy)
			explains[j] = true
		}
	}
	byPos := map[model.Pos]int{}
	for i, f := range findings {
		for _, e := range f.Evidence {
			if e.Pos.IsZero() {
				continue
			}
			if j, ok := byPos[e.Pos]; !ok {
				byPos[e.Pos] = i
			} else if j != i {
				join(i, j, LinkSharedEvidence)
			}
		}
	}
	bySubject := map[string]int{}
	for i, f := range findings {
		for _, k := range []string{"object", "address"} {
			v := f.Subject[k]
			if v == "" {
				continue
			}
			if j, ok := bySubject[k+"\x00"+v]; !ok {
				bySubject[k+"\x00"+v] = i
			} else {
				join(i, j, LinkSameSubject)
			}
		}
	}
	// The same connection attempts seen under two addresses (a Service's
	// before the DNAT, a Pod's after it) are one failure: their evidence
	// names the same client's SYNs in the same file.
	byConn := map[string]int{}
	for i, f := range findings {
		for _, e := range f.Evidence {
			m := synNote.FindStringSubmatch(e.Note)
			if m == nil {
				continue
			}
			k := e.File + "\x00" + m[1]
			if j, ok := byConn[k]; !ok {
				byConn[k] = i
			} else if j != i {
				join(i, j, LinkSameConnection)
			}
		}
	}
	var chained []int
	for i, f := range findings {
		if causality.Chained(f.Rule) {
			chained = append(chained, i)
		}
	}
	for x, i := range chained {
		for _, j := range chained[x+1:] {
			if causality.Linked(findings[i].Rule, findings[j].Rule) && nodesMeet(nodes[i], nodes[j]) {
				join(i, j, LinkCauseFamily)
			}
		}
	}

	groups := map[int][]int{}
	for i := range findings {
		groups[find(i)] = append(groups[find(i)], i)
	}
	var list [][]int
	for _, g := range groups {
		list = append(list, g)
	}
	lead := func(g []int) int {
		best := g[0]
		better := func(i, j int) bool {
			a, b := findings[i], findings[j]
			if causality.Linked(a.Rule, b.Rule) {
				return causality.Leads(a.Rule, b.Rule)
			}
			if ea, eb := explains[i], explains[j]; ea != eb {
				return ea
			}
			if a.Severity != b.Severity {
				return a.Severity > b.Severity
			}
			if ca, cb := certaintyRank(a.Certainty), certaintyRank(b.Certainty); ca != cb {
				return ca < cb
			}
			return i < j
		}
		for _, i := range g[1:] {
			if better(i, best) {
				best = i
			}
		}
		return best
	}
	type group struct {
		members []int
		lead    int
		sev     analyzer.Severity
	}
	gs := make([]group, 0, len(list))
	for _, g := range list {
		sort.Ints(g)
		grp := group{members: g, lead: lead(g)}
		for _, i := range g {
			grp.sev = max(grp.sev, findings[i].Severity)
		}
		gs = append(gs, grp)
	}
	sort.Slice(gs, func(x, y int) bool {
		a, b := gs[x], gs[y]
		if a.sev != b.sev {
			return a.sev > b.sev
		}
		if ca, cb := certaintyRank(findings[a.lead].Certainty), certaintyRank(findings[b.lead].Certainty); ca != cb {
			return ca < cb
		}
		if len(a.members) != len(b.members) {
			return len(a.members) > len(b.members)
		}
		return a.members[0] < b.members[0]
	})
	for k, g := range gs {
		if k == MaxVerdictCauses {
			for _, rest := range gs[k:] {
				v.Others += len(rest.members)
			}
			break
		}
		f := findings[g.lead]
		c := VerdictCause{
			Severity: g.sev, Certainty: f.Certainty, Rule: f.Rule, Fingerprint: f.Fingerprint, Title: f.Title,
			Related: []VerdictLink{},
		}
		var seenAs []string
		for _, i := range g.members {
			if i == g.lead {
				continue
			}
			l := VerdictLink{
				Rule: findings[i].Rule, Fingerprint: findings[i].Fingerprint, Title: findings[i].Title,
				Link: linkTo(i, g.lead, g.members, link),
			}
			if a := findings[i].Subject["address"]; l.Link == LinkSameConnection && l.Rule == f.Rule && a != "" {
				seenAs = append(seenAs, a)
			}
			c.Related = append(c.Related, l)
		}
		c.Line = verdictLine(c, seenAs)
		v.Causes = append(v.Causes, c)
	}
	return v
}

// linkTo is why member i is in the group of lead: its direct link to the
// lead, else its strongest direct link to another member.
func linkTo(i, lead int, members []int, link map[[2]int]string) string {
	if why, ok := link[[2]int{i, lead}]; ok {
		return why
	}
	order := []string{LinkExplainedBy, LinkSharedEvidence, LinkSameConnection, LinkSameSubject, LinkCauseFamily}
	best := len(order)
	for _, j := range members {
		if why, ok := link[[2]int{i, j}]; ok {
			best = min(best, slices.Index(order, why))
		}
	}
	if best == len(order) {
		// Joined only through the others of the group.
		return LinkCauseFamily
	}
	return order[best]
}

// certaintyRank orders certainties, the firmest first.
func certaintyRank(c analyzer.Certainty) int {
	switch c {
	case analyzer.Proven:
		return 0
	case analyzer.Likely:
		return 1
	}
	return 2
}

// verdictLine is the sentence of one cause: "Proven cause: T [rule]",
// "Likely cause:", or "Unexplained:" for a symptom whose cause is not
// established (it is not a cause), then the addresses the same failure
// was also seen under (seenAs: the findings of the same rule on the same
// connections) and the rules of the other related findings, as likely
// following from it: "; likely also behind synack-reset,
// icmp-unreachable (2)"; other findings of its own rule are counted as
// more like it.
func verdictLine(c VerdictCause, seenAs []string) string {
	word := "Unexplained"
	switch c.Certainty {
	case analyzer.Proven:
		word = "Proven cause"
	case analyzer.Likely:
		word = "Likely cause"
	}
	s := fmt.Sprintf("%s: %s [%s]", word, c.Title, c.Rule)
	if len(seenAs) > 0 {
		s += "; also seen as " + strings.Join(seenAs, ", ")
	}
	counts := map[string]int{}
	var rules []string
	same := 0
	for _, l := range c.Related {
		if l.Link == LinkSameConnection && l.Rule == c.Rule && len(seenAs) > 0 {
			continue
		}
		if l.Rule == c.Rule {
			// Another finding of the same rule (the same cause on
			// another address family or subject) is not behind it.
			same++
			continue
		}
		if counts[l.Rule] == 0 {
			rules = append(rules, l.Rule)
		}
		counts[l.Rule]++
	}
	if same > 0 {
		s += fmt.Sprintf("; %d more %s like it", same, plural(same, "finding", "findings"))
	}
	if len(rules) == 0 {
		return s
	}
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = r
		if counts[r] > 1 {
			parts[i] = fmt.Sprintf("%s (%d)", r, counts[r])
		}
	}
	return fmt.Sprintf("%s; likely also behind %s", s, strings.Join(parts, ", "))
}

// synNote reads the client's address and port from the note of a SYN's
// evidence: "SYN 10.244.0.5:38022 -> 10.96.0.10:80, seq ...".
var synNote = lazyre.New(`^SYN (\S+) -> `)

// findingNodes are the nodes a finding is about: its subject's node, else
// the nodes of the files its evidence cites.
func findingNodes(f analyzer.Finding, nodeOfFile map[string]string) []string {
	if n := f.Subject["node"]; n != "" {
		return []string{n}
	}
	var out []string
	for _, e := range f.Evidence {
		if n := nodeOfFile[e.File]; n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// nodesMeet reports whether two findings can be on one node: one of them
// names no node, or they share one.
func nodesMeet(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return true
	}
	for _, n := range a {
		if slices.Contains(b, n) {
			return true
		}
	}
	return false
}
