package analyzer_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/model"
)

// dnsFamily is a symptom reporter and three rules that explain its
// symptom: each reports when the snapshot holds an input named after it.
func dnsFamily() (reporter *analyzer.Rule, all []*analyzer.Rule) {
	dns := &analyzer.Symptom{Name: "DNS timeouts", Doc: "lookups time out"}
	other := &analyzer.Symptom{Name: "probes time out", Doc: "probes fail"}
	reportsOn := func(file string, f analyzer.Finding) func(p *analyzer.Pass) error {
		return func(p *analyzer.Pass) error {
			for _, in := range p.Snap.Inputs {
				if in.Path == file {
					p.Report(f)
				}
			}
			return nil
		}
	}
	reporter = &analyzer.Rule{Name: "dns-errors", Doc: "dns errors\n\nx", Severity: analyzer.Warning,
		Needs: []model.Kind{model.KindLogs}, Symptoms: []analyzer.SymptomRef{dns.At(50), other.At(10)},
		Run: reportsOn("app.log", analyzer.Finding{Title: "lookups time out", Certainty: analyzer.Unknown,
			Subject: map[string]string{"node": "n1"}, Alternatives: []string{"an upstream that does not answer"}})}
	effect := &analyzer.Rule{Name: "probe-restarts", Doc: "restarts\n\nx", Severity: analyzer.Warning,
		Symptoms: []analyzer.SymptomRef{other.At(5)}, Run: func(*analyzer.Pass) error { return nil }}
	reporter.Explains = []*analyzer.Rule{effect}
	stale := &analyzer.Rule{Name: "conntrack-stale-udp", Doc: "stale\n\nx", Severity: analyzer.Error,
		Needs: []model.Kind{model.KindConntrack}, Symptoms: []analyzer.SymptomRef{dns.At(10)}, Decide: "conntrack -L -p udp",
		Run: reportsOn("stale.txt", analyzer.Finding{Title: "stale UDP entries", Certainty: analyzer.Likely,
			Subject: map[string]string{"node": "n1"}, Decide: "conntrack -L -p udp --dport 53"})}
	ndots := &analyzer.Rule{Name: "ndots-amplification", Doc: "ndots\n\nx", Severity: analyzer.Warning,
		Needs: []model.Kind{model.KindLogs}, Uses: []model.Kind{model.KindKube}, Symptoms: []analyzer.SymptomRef{dns.At(100)},
		Decide: "cat /etc/resolv.conf", Run: func(*analyzer.Pass) error { return nil }}
	loop := &analyzer.Rule{Name: "coredns-loop", Doc: "loop\n\nx", Severity: analyzer.Error,
		Needs: []model.Kind{model.KindLogs}, Uses: []model.Kind{model.KindResolvConf}, Symptoms: []analyzer.SymptomRef{dns.At(130)},
		Decide: "kubectl logs coredns",
		Run: reportsOn("coredns.log", analyzer.Finding{Title: "CoreDNS forwards to itself", Certainty: analyzer.Likely,
			Subject: map[string]string{"node": "n1"}, Decide: "cat /etc/resolv.conf on n1"})}
	return reporter, []*analyzer.Rule{reporter, effect, stale, ndots, loop}
}

func inputs(paths ...string) *model.Snapshot {
	kinds := map[string]model.Kind{"app.log": model.KindLogs, "coredns.log": model.KindLogs, "stale.txt": model.KindConntrack,
		"conntrack.txt": model.KindConntrack, "objects.json": model.KindKube, "resolv.conf": model.KindResolvConf}
	s := &model.Snapshot{}
	for _, p := range paths {
		s.Inputs = append(s.Inputs, model.Input{Path: p, Kind: kinds[p], Node: "n1"})
	}
	return s
}

func candidatesOf(t *testing.T, snap *model.Snapshot, rules []*analyzer.Rule) analyzer.Finding {
	t.Helper()
	if err := analyzer.Validate(rules); err != nil {
		t.Fatal(err)
	}
	res := analyzer.Run(context.Background(), snap, rules, nil)
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	for _, f := range res.Findings {
		if f.Rule == "dns-errors" {
			return f
		}
	}
	t.Fatal("no dns-errors finding")
	return analyzer.Finding{}
}

func order(f analyzer.Finding) []string {
	var out []string
	for _, c := range f.Candidates {
		out = append(out, string(c.Standing)+" "+c.Rule)
	}
	return out
}

// The candidates of a finding of unknown cause follow the evidence: the
// same three causes of DNS timeouts come in another order, with another
// standing, as the bundle shows more.
func TestCandidatesFollowTheEvidence(t *testing.T) {
	_, rules := dnsFamily()
	for _, c := range []struct {
		name   string
		snap   *model.Snapshot
		want   []string
		decide string
		alt0   string
	}{
		{"logs only: all open, by rank", inputs("app.log"),
			[]string{"open conntrack-stale-udp", "open ndots-amplification", "open coredns-loop"}, "conntrack -L -p udp", "an upstream that does not answer"},
		{"everything read, nothing found: all weakened", inputs("app.log", "conntrack.txt", "objects.json", "resolv.conf"),
			[]string{"weakened conntrack-stale-udp", "weakened ndots-amplification", "weakened coredns-loop"}, "conntrack -L -p udp", "an upstream that does not answer"},
		{"conntrack read, kube missing: ndots open first", inputs("app.log", "conntrack.txt", "resolv.conf"),
			[]string{"open ndots-amplification", "weakened conntrack-stale-udp", "weakened coredns-loop"}, "cat /etc/resolv.conf", "an upstream that does not answer"},
		{"the loop found: it leads", inputs("app.log", "coredns.log"),
			[]string{"found coredns-loop", "open conntrack-stale-udp", "open ndots-amplification"}, "cat /etc/resolv.conf on n1", "CoreDNS forwards to itself (coredns-loop)"},
		{"both found: the firmer first", inputs("app.log", "coredns.log", "stale.txt", "objects.json"),
			[]string{"found conntrack-stale-udp", "found coredns-loop", "weakened ndots-amplification"}, "conntrack -L -p udp --dport 53", "stale UDP entries (conntrack-stale-udp)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := candidatesOf(t, c.snap, rules)
			if got := order(f); !slices.Equal(got, c.want) {
				t.Errorf("candidates %q, want %q", got, c.want)
			}
			if f.Decide != c.decide {
				t.Errorf("decide %q, want %q", f.Decide, c.decide)
			}
			if len(f.Alternatives) == 0 || f.Alternatives[0] != c.alt0 {
				t.Errorf("alternatives %q, want %q first", f.Alternatives, c.alt0)
			}
			for _, cd := range f.Candidates {
				if cd.Why == "" || cd.Decide == "" {
					t.Errorf("candidate %+v: no why or no decide", cd)
				}
				if cd.Standing == analyzer.CandidateOpen && !strings.Contains(cd.Why, "cannot be ruled out") {
					t.Errorf("open candidate %s: %q", cd.Rule, cd.Why)
				}
			}
		})
	}
}

// Only a finding of unknown cause at warning or above gets candidates, and
// a rule its own rule is known to lead to is an effect, not a candidate.
func TestCandidatesOnlyForUnknownCauses(t *testing.T) {
	reporter, rules := dnsFamily()
	f := candidatesOf(t, inputs("app.log"), rules)
	if slices.ContainsFunc(f.Candidates, func(c analyzer.Candidate) bool { return c.Rule == "probe-restarts" }) {
		t.Errorf("the effect probe-restarts is a candidate: %q", order(f))
	}
	// A likely cause, and an info finding, get none.
	run := reporter.Run
	for _, mod := range []func(*analyzer.Finding){
		func(g *analyzer.Finding) { g.Certainty = analyzer.Likely },
		func(g *analyzer.Finding) { g.Severity = analyzer.Info },
	} {
		reporter.Run = func(p *analyzer.Pass) error {
			g := analyzer.Finding{Title: "lookups time out", Certainty: analyzer.Unknown, Subject: map[string]string{"node": "n1"}}
			mod(&g)
			p.Report(g)
			return nil
		}
		if f := candidatesOf(t, inputs("app.log"), rules); len(f.Candidates) > 0 {
			t.Errorf("%s %s finding: candidates %q", f.Severity, f.Certainty, order(f))
		}
	}
	reporter.Run = run
	// Alone, a rule has no one to rank.
	if f := candidatesOf(t, inputs("app.log"), []*analyzer.Rule{reporter}); len(f.Candidates) > 0 {
		t.Errorf("a rule run alone: candidates %q", order(f))
	}
}
