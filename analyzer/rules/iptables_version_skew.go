package rules

import (
	"fmt"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/lazyre"
	"github.com/netmortem/netmortem/model"
)

// IPTablesVersionSkew finds a component whose iptables binary (in its
// container image) speaks another kernel interface than the host's.
var IPTablesVersionSkew = &analyzer.Rule{
	Name:        "iptables-version-skew",
	Severity:    analyzer.Error,
	Needs:       []model.Kind{model.KindLogs},
	Uses:        []model.Kind{model.KindNetfilter},
	SubjectKeys: []string{"node", "component"},
	Run:         runIPTablesVersionSkew,
	Symptoms:    []analyzer.SymptomRef{ServiceUnreachable.At(230)},
	Proof: "a component's error from its own iptables binary that names its version and cannot reach the " +
		"host's tables (\"iptables v1.6.0: can't initialize iptables table `nat'\", \"Could not fetch rule set " +
		"generation id\"), and a dump of the same node whose rules are in the other backend",
	Unproven: "the error alone is a warning of likely cause (the kernel may lack the table's module instead), " +
		"with iptables --version on the host and in the component's container to decide",
	Doc: `a component's iptables does not match the host's

kube-proxy, the CNI agents and kubelet write the node's rules with the
iptables binary of their own image. Since iptables 1.8 a host's rules live
either in the legacy x_tables interface or in nf_tables, and a binary of the
other kind, or an older version, does not see them: an iptables 1.6 (always
legacy) in a kube-proxy image on a host whose iptables 1.8 runs in nf_tables
mode fails with "can't initialize iptables table 'nat': Table does not exist
(do you need to insmod?)", so kube-proxy programs no Service rules; an
iptables-nft on a kernel without nf_tables fails with "Could not fetch rule set
generation id"; versions 1.8.7 and 1.8.8 of iptables-nft decode each other's
rules wrongly, turning a KUBE-FIREWALL mark match into an unconditional DROP.

Evidence: the components' log lines that quote their iptables' error with
its version ("iptables v1.6.0: ..."), and the node's rulesets, whose
header or format says the host's backend (iptables-save's "(nf_tables)",
nft list ruleset).

Severity: an error when a dump of the same node shows its rules in the other
backend; a warning of likely cause from the error alone.

Fix: run the component with an image whose iptables matches the host
(kube-proxy from Kubernetes 1.17 on ships iptables 1.8 with a wrapper that
picks the host's backend), or switch the host to the backend the images use
(update-alternatives --set iptables /usr/sbin/iptables-legacy), then restart
the component so it writes its rules again.`,
}

// iptSkewRe matches iptables' own error with its version: the legacy binary
// that finds no table, or the nft binary that finds no nf_tables.
var iptSkewRe = lazyre.New("(ip6?tables(?:-legacy|-nft)?(?:-restore|-save)?) v(\\d+)\\.(\\d+)(?:\\.(\\d+))?(?: \\((legacy|nf_tables)\\))?: " +
	"(?:can't initialize ip6?tables table [`'\"]?(\\w+)|.*Could not fetch rule set generation id)")

// iptSkewError is what a component's iptables error says.
type iptSkewError struct {
	ev      *model.LogEvent
	tool    string // iptables, iptables-restore ...
	version string // 1.6.0
	backend string // model.BackendLegacy or BackendNFT: the component's
	table   string // the table it could not open, "" for nft's error
	count   int
}

func runIPTablesVersionSkew(p *analyzer.Pass) error {
	var errs []*iptSkewError
	seen := map[string]*iptSkewError{}
	for i := range p.Snap.Logs {
		ev := &p.Snap.Logs[i]
		m := iptSkewRe.FindStringSubmatch(ev.Message)
		if m == nil {
			continue
		}
		k := ev.Node + "\x00" + ev.Source
		if s := seen[k]; s != nil {
			s.count++
			continue
		}
		s := &iptSkewError{ev: ev, tool: m[1], table: m[6], count: 1}
		s.version, s.backend = iptablesBinary(m[1], m[2], m[3], m[4], m[5])
		if m[6] == "" {
			s.backend = model.BackendNFT // nft's own error: it finds no nf_tables
		}
		if s.backend == "" {
			continue // a 1.8 binary of either backend: its error says nothing of the host's
		}
		seen[k] = s
		errs = append(errs, s)
	}
	for _, s := range errs {
		var other, same *model.Ruleset
		for _, rs := range p.Snap.Netfilter {
			if rs.Backend == "" || rs.Node != s.ev.Node {
				continue
			}
			if rs.Backend != s.backend && other == nil {
				other = rs
			} else if rs.Backend == s.backend && same == nil {
				same = rs
			}
		}
		p.Report(iptSkewFinding(s, other, same))
	}
	return nil
}

// iptSkewFinding judges and words one component's iptables error, with a dump
// of its node in the other backend (other) or in its own (same), when the
// bundle has one.
func iptSkewFinding(s *iptSkewError, other, same *model.Ruleset) analyzer.Finding {
	comp := s.ev.Source
	if comp == "" {
		comp = "a component"
	}
	host := map[string]string{model.BackendLegacy: "nf_tables", model.BackendNFT: "legacy"}[s.backend]
	f := analyzer.Finding{
		Subject:   subject("node", s.ev.Node, "component", s.ev.Source),
		Severity:  analyzer.Warning,
		Certainty: analyzer.Likely,
		Facts: map[string]any{"component": comp, "iptables_version": s.version, "component_backend": s.backend,
			"errors": s.count},
		Title: fmt.Sprintf("%s's iptables %s (%s) cannot reach the host's tables on %s", comp, s.version, s.backend,
			nodeName(s.ev.Node)),
		Supports: []string{fmt.Sprintf("%s logged its %s v%s's error %d %s, first %s", comp, s.tool, s.version, s.count,
			plural(s.count, "time", "times"), s.ev.Pos)},
	}
	ev := []analyzer.Evidence{{Pos: s.ev.Pos, Note: fmt.Sprintf("%s v%s (%s)", s.tool, s.version, s.backend)}}
	if s.table != "" {
		f.Summary = fmt.Sprintf("%s on %s failed %d %s because its %s v%s, a %s binary, cannot open the %s table: "+
			"the table does not exist in the legacy interface.", comp, nodeName(s.ev.Node), s.count,
			plural(s.count, "time", "times"), s.tool, s.version, s.backend, s.table)
		f.Alternatives = []string{"a kernel without the legacy table's module (modprobe iptable_" + s.table + "), the host's " +
			"rules being legacy too"}
	} else {
		f.Summary = fmt.Sprintf("%s on %s failed %d %s because its %s v%s, an nf_tables binary, finds no nf_tables in the "+
			"kernel.", comp, nodeName(s.ev.Node), s.count, plural(s.count, "time", "times"), s.tool, s.version)
		f.Alternatives = []string{"a kernel without nf_tables (older than 3.13, or its modules not loaded)"}
	}
	f.Summary += " Until it can, it writes none of its rules (kube-proxy: no Service rules)."
	switch {
	case other != nil && s.ev.Node != "":
		f.Certainty, f.Severity, f.Alternatives = analyzer.Proven, analyzer.Error, nil
		f.Supports = append(f.Supports, fmt.Sprintf("the node's rules are in the %s backend (%s)", other.Backend, other.Pos))
		ev = append(ev, analyzer.Evidence{Pos: other.Pos, Note: "host rules: " + other.Backend})
	case other != nil:
		f.Supports = append(f.Supports, fmt.Sprintf("a dump of rules in the %s backend, of a node the bundle does not "+
			"name (%s)", other.Backend, other.Pos))
		ev = append(ev, analyzer.Evidence{Pos: other.Pos, Note: "rules: " + other.Backend + ", node not named"})
	case same != nil:
		f.Contradicts = append(f.Contradicts, fmt.Sprintf("a dump of the node's rules is of the %s backend, as the "+
			"component's binary (%s)", same.Backend, same.Pos))
	}
	if f.Certainty != analyzer.Proven {
		f.Decide = "# on " + nodeName(s.ev.Node) + ", then in " + comp + "'s container (POD)\niptables --version\n" +
			"kubectl -n kube-system exec POD -- iptables --version"
	}
	f.Cause = fmt.Sprintf("%s's image carries iptables %s (%s), while the host's iptables writes its rules with %s: the "+
		"two do not see each other's tables, so %s cannot program the node.", comp, s.version, s.backend, host, comp)
	f.Fix = "Run " + comp + " with an image whose iptables matches the host's (kube-proxy from Kubernetes 1.17 on picks " +
		"the host's backend), or switch the host to the image's backend (update-alternatives --set iptables " +
		"/usr/sbin/iptables-" + s.backend + "), then restart " + comp + "."
	f.Evidence = dedupEvidence(ev)
	return f
}
