package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
)

// analyzeDir runs every rule on a fixture directory.
func analyzeDir(t *testing.T, dir string) *report.Report {
	t.Helper()
	ctx := context.Background()
	snap, warnings, err := parse.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return report.New(snap, warnings, analyzer.Run(ctx, snap, rules.All(), nil))
}

// causeRules is a cause as "lead: related rules, sorted".
func causeRules(c report.VerdictCause) string {
	var rel []string
	for _, l := range c.Related {
		rel = append(rel, l.Rule)
	}
	slices.Sort(rel)
	return c.Rule + ": " + strings.Join(rel, " ")
}

// TestVerdictSeeds holds the grouping of the seed incidents: in 002 the
// port range overlap is behind the SYN/ACK resets and the TIME-WAIT churn,
// in 003 the two load-balancer controllers behind both ICMP errors, in 004
// kube-proxy's failed syncs behind the stale DNAT; 001's restart loop and
// version skew are two causes.
func TestVerdictSeeds(t *testing.T) {
	for dir, want := range map[string][]string{
		"001-probe-restart-loop":     {"probe-restart-loop: ", "version-skew: "},
		"002-synack-reset":           {"ephemeral-nodeport-overlap: synack-reset timewait-churn"},
		"003-lb-controller-conflict": {"lb-controller-conflict: icmp-unreachable icmp-unreachable"},
		"004-stale-dnat":             {"kube-proxy-sync-errors: stale-dnat"},
	} {
		r := analyzeDir(t, filepath.Join("..", "fixtures", "seeds", dir))
		var got []string
		for _, c := range r.Verdict.Causes {
			got = append(got, causeRules(c))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: verdict %q, want %q", dir, got, want)
		}
	}
	r := analyzeDir(t, filepath.Join("..", "fixtures", "seeds", "002-synack-reset"))
	var buf bytes.Buffer
	if err := report.Write(&buf, "table", r); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(buf.String(), "\n")
	if want := "Proven cause: ephemeral ports 1024-65000 overlap the NodePort range 20000-40000 on this node [ephemeral-nodeport-overlap]; likely also behind synack-reset, timewait-churn"; first != want {
		t.Errorf("table starts with\n%s\nwant\n%s", first, want)
	}
}

// TestVerdictFixtures checks the verdict of every incident and seed
// fixture: every finding is in exactly one cause or counted in Others, a
// cause says no more than its lead finding's certainty, and the table and
// markdown start with its lines.
func TestVerdictFixtures(t *testing.T) {
	var dirs []string
	for _, parent := range []string{"incidents", "seeds"} {
		entries, err := os.ReadDir(filepath.Join("..", "fixtures", parent))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join("..", "fixtures", parent, e.Name()))
			}
		}
	}
	if len(dirs) < 40 {
		t.Fatalf("only %d fixtures found", len(dirs))
	}
	grouped := 0
	for _, dir := range testutil.RaceSample(t, 4, dirs) {
		r := analyzeDir(t, dir)
		checkVerdict(t, dir, r)
		for _, c := range r.Verdict.Causes {
			if len(c.Related) > 0 {
				grouped++
			}
		}
		if len(r.Findings) == 0 {
			continue
		}
		for _, format := range []string{"table", "markdown"} {
			var buf bytes.Buffer
			if err := report.Write(&buf, format, r); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			start := map[string]string{"table": "Findings (", "markdown": "| Severity |"}[format]
			for _, c := range r.Verdict.Causes {
				if i := strings.Index(out, c.Line); i < 0 || i > strings.Index(out, start) {
					t.Errorf("%s -o %s: verdict line %q not before the findings", dir, format, c.Line)
				}
			}
		}
	}
	if grouped == 0 && !testutil.Race { // a sample may hold none
		t.Error("no fixture has a cause grouping several findings")
	}
}

// checkVerdict checks the verdict r carries against its findings.
func checkVerdict(t *testing.T, name string, r *report.Report) {
	t.Helper()
	v := r.Verdict
	if len(v.Causes) > report.MaxVerdictCauses {
		t.Errorf("%s: %d causes, more than %d", name, len(v.Causes), report.MaxVerdictCauses)
	}
	// Info findings say nothing is broken: never in the verdict.
	broken := 0
	key := func(rule, fp, title string) string { return rule + "\x00" + fp + "\x00" + title }
	byKey := map[string]analyzer.Finding{}
	for _, f := range r.Findings {
		if f.Severity > analyzer.Info {
			byKey[key(f.Rule, f.Fingerprint, f.Title)] = f
			broken++
		}
	}
	if broken > 0 && len(v.Causes) == 0 {
		t.Errorf("%s: %d findings and no cause", name, broken)
	}
	n := v.Others
	for _, c := range v.Causes {
		lead, ok := byKey[key(c.Rule, c.Fingerprint, c.Title)]
		if !ok {
			t.Errorf("%s: cause %q names no finding", name, c.Line)
			continue
		}
		if c.Certainty != lead.Certainty {
			t.Errorf("%s: cause %q is %q, its finding %q", name, c.Line, c.Certainty, lead.Certainty)
		}
		// A cause not established is a symptom, said as such.
		prefix := map[analyzer.Certainty]string{analyzer.Proven: "Proven cause: ", analyzer.Likely: "Likely cause: "}[lead.Certainty]
		if prefix == "" {
			prefix = "Unexplained: "
		}
		if !strings.HasPrefix(c.Line, prefix) {
			t.Errorf("%s: the %s cause reads %q", name, lead.Certainty, c.Line)
		}
		sev := lead.Severity
		n++
		for _, l := range c.Related {
			f, ok := byKey[key(l.Rule, l.Fingerprint, l.Title)]
			if !ok {
				t.Errorf("%s: related %s %q names no finding", name, l.Rule, l.Title)
				continue
			}
			sev = max(sev, f.Severity)
			n++
			if l.Link == report.LinkSameConnection && l.Rule == c.Rule {
				// The same failure under another address: named by it.
				if a := f.Subject["address"]; !strings.Contains(c.Line, "also seen as ") || !strings.Contains(c.Line, a) {
					t.Errorf("%s: %q does not name the address %s the failure was also seen under", name, c.Line, a)
				}
			} else if !strings.Contains(c.Line, l.Rule) {
				t.Errorf("%s: %q does not name the related %s", name, c.Line, l.Rule)
			}
			if !slices.Contains([]string{report.LinkExplainedBy, report.LinkSharedEvidence, report.LinkSameConnection, report.LinkSameSubject,
				report.LinkCauseFamily}, l.Link) {
				t.Errorf("%s: link %q", name, l.Link)
			}
		}
		if c.Severity != sev {
			t.Errorf("%s: cause %q is %s, its highest finding %s", name, c.Line, c.Severity, sev)
		}
	}
	if n != broken {
		t.Errorf("%s: the verdict accounts for %d findings of %d", name, n, broken)
	}
	for i := 1; i < len(v.Causes); i++ {
		if v.Causes[i].Severity > v.Causes[i-1].Severity {
			t.Errorf("%s: cause %d (%s) after a less severe one", name, i+1, v.Causes[i].Severity)
		}
	}
}

// finding is a hand-made finding for the verdict's unit tests.
func vfinding(rule string, sev analyzer.Severity, c analyzer.Certainty, subject map[string]string, ev ...model.Pos) analyzer.Finding {
	f := analyzer.Finding{Rule: rule, Severity: sev, Certainty: c, Title: rule + " title", Fingerprint: rule + fmt.Sprint(subject), Subject: subject}
	for _, p := range ev {
		f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: p})
	}
	return f
}

func TestVerdictGrouping(t *testing.T) {
	pos := func(file string, line int) model.Pos { return model.Pos{File: file, Line: line} }
	inputs := []model.Input{{Path: "n1/sysctl.txt", Node: "n1"}, {Path: "n2/sysctl.txt", Node: "n2"}, {Path: "n2/ss.txt", Node: "n2"}}
	for _, tc := range []struct {
		name     string
		findings []analyzer.Finding
		want     []string // causeRules of each cause
		links    []string // the links of the first cause's related findings
		others   int
	}{
		{
			name: "a chain of rules on one node is one cause, its root first",
			findings: []analyzer.Finding{
				vfinding("synack-reset", analyzer.Error, analyzer.Proven, nil, pos("n1/cap.txt", 2)),
				vfinding("ephemeral-nodeport-overlap", analyzer.Warning, analyzer.Likely, nil, pos("n1/sysctl.txt", 1)),
			},
			want: []string{"ephemeral-nodeport-overlap: synack-reset"}, links: []string{report.LinkCauseFamily},
		},
		{
			name: "the root is the earlier rule of the chain the two share",
			findings: []analyzer.Finding{
				vfinding("icmp-unreachable", analyzer.Warning, analyzer.Likely, nil, pos("n1/cap.txt", 2)),
				vfinding("arp-flap", analyzer.Warning, analyzer.Likely, nil, pos("n1/neigh.txt", 1)),
			},
			want: []string{"arp-flap: icmp-unreachable"}, links: []string{report.LinkCauseFamily},
		},
		{
			name: "the same chain on two nodes is two causes",
			findings: []analyzer.Finding{
				vfinding("ephemeral-nodeport-overlap", analyzer.Error, analyzer.Proven, nil, pos("n1/sysctl.txt", 1)),
				vfinding("timewait-churn", analyzer.Warning, analyzer.Likely, nil, pos("n2/ss.txt", 3)),
			},
			want: []string{"ephemeral-nodeport-overlap: ", "timewait-churn: "},
		},
		{
			name: "a subject's node counts before the files'",
			findings: []analyzer.Finding{
				vfinding("kube-proxy-sync-errors", analyzer.Error, analyzer.Proven, map[string]string{"node": "n2"}, pos("n1/sysctl.txt", 9)),
				vfinding("stale-dnat", analyzer.Error, analyzer.Proven, map[string]string{"node": "n1"}, pos("n1/sysctl.txt", 5)),
			},
			want: []string{"kube-proxy-sync-errors: ", "stale-dnat: "},
		},
		{
			name: "unrelated rules citing one line are one cause",
			findings: []analyzer.Finding{
				vfinding("version-skew", analyzer.Warning, analyzer.Likely, nil, pos("nodes.txt", 6)),
				vfinding("probe-restart-loop", analyzer.Error, analyzer.Proven, nil, pos("pods.txt", 5), pos("nodes.txt", 6)),
			},
			want: []string{"probe-restart-loop: version-skew"}, links: []string{report.LinkSharedEvidence},
		},
		{
			name: "the same object is one cause",
			findings: []analyzer.Finding{
				vfinding("stale-dnat", analyzer.Error, analyzer.Proven, map[string]string{"object": "Service a/b"}, pos("ipt.txt", 1)),
				vfinding("network-policy-deny", analyzer.Warning, analyzer.Unknown, map[string]string{"object": "Service a/b"}, pos("np.yaml", 1)),
				vfinding("network-policy-deny", analyzer.Warning, analyzer.Unknown, map[string]string{"object": "Service a/c"}, pos("np.yaml", 9)),
			},
			want:  []string{"stale-dnat: network-policy-deny", "network-policy-deny: "},
			links: []string{report.LinkSameSubject},
		},
		{
			name: "more than three causes: the rest are counted",
			findings: []analyzer.Finding{
				vfinding("version-skew", analyzer.Warning, analyzer.Likely, nil, pos("a", 1)),
				vfinding("probe-restart-loop", analyzer.Error, analyzer.Proven, nil, pos("b", 1)),
				vfinding("mtu-blackhole", analyzer.Info, analyzer.Unknown, nil, pos("c", 1)),
				vfinding("rp-filter-drop", analyzer.Warning, analyzer.Proven, nil, pos("d", 1)),
				vfinding("apiserver-affinity", analyzer.Warning, analyzer.Unknown, nil, pos("e", 1)),
			},
			// The info finding is in no cause, nor counted: it says
			// nothing is broken.
			want:   []string{"probe-restart-loop: ", "rp-filter-drop: ", "version-skew: "},
			others: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := report.NewVerdict(rules.All(), tc.findings, inputs)
			var got []string
			for _, c := range v.Causes {
				got = append(got, causeRules(c))
			}
			if !slices.Equal(got, tc.want) || v.Others != tc.others {
				t.Errorf("causes %q, others %d; want %q, %d", got, v.Others, tc.want, tc.others)
			}
			var links []string
			if len(v.Causes) > 0 {
				for _, l := range v.Causes[0].Related {
					links = append(links, l.Link)
				}
			}
			if !slices.Equal(links, tc.links) {
				t.Errorf("links %q, want %q", links, tc.links)
			}
			checkVerdict(t, tc.name, &report.Report{Findings: tc.findings, Verdict: v})
		})
	}
}

// TestVerdictExplainedBy: a finding the analyzer explains by another is
// grouped under it, and the link says so.
func TestVerdictExplainedBy(t *testing.T) {
	cause := vfinding("rp-filter-drop", analyzer.Error, analyzer.Proven, nil, model.Pos{File: "cap", Frame: 3})
	symptom := vfinding("syn-unanswered", analyzer.Warning, analyzer.Unknown, nil, model.Pos{File: "other", Frame: 9})
	symptom.ExplainedBy = cause.Rule + ": " + cause.Title
	v := report.NewVerdict(rules.All(), []analyzer.Finding{symptom, cause}, nil)
	if len(v.Causes) != 1 || v.Causes[0].Rule != "rp-filter-drop" || len(v.Causes[0].Related) != 1 ||
		v.Causes[0].Related[0].Link != report.LinkExplainedBy {
		t.Fatalf("verdict %+v", v)
	}
	if want := "Proven cause: rp-filter-drop title [rp-filter-drop]; likely also behind syn-unanswered"; v.Causes[0].Line != want {
		t.Errorf("line %q, want %q", v.Causes[0].Line, want)
	}
	// A lone cause that is not established is said so.
	v = report.NewVerdict(rules.All(), []analyzer.Finding{symptom}, nil)
	if want := "Unexplained: syn-unanswered title [syn-unanswered]"; len(v.Causes) != 1 || v.Causes[0].Line != want {
		t.Errorf("verdict %+v, want the line %q", v, want)
	}
}

// TestVerdictFromWrite: Write computes the verdict from the findings it
// writes, even of a report built by hand, and leaves the caller's report
// as it was.
func TestVerdictFromWrite(t *testing.T) {
	r := &report.Report{Findings: []analyzer.Finding{
		vfinding("probe-restart-loop", analyzer.Error, analyzer.Proven, nil, model.Pos{File: "p", Line: 1}),
	}}
	var buf bytes.Buffer
	if err := report.Write(&buf, "json", r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Verdict report.Verdict `json:"verdict"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Verdict.Causes) != 1 || doc.Verdict.Causes[0].Rule != "probe-restart-loop" {
		t.Errorf("verdict in JSON: %+v", doc.Verdict)
	}
	if r.Verdict.Causes != nil {
		t.Errorf("Write changed the caller's report: %+v", r.Verdict)
	}
	buf.Reset()
	if err := report.Write(&buf, "json", &report.Report{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"verdict": {
    "causes": [],
    "others": 0
  }`) {
		t.Errorf("an empty report's verdict:\n%s", buf.String())
	}
}

// TestReportRules: the verdict of a report groups findings by their
// rules' chains only when it has the rules that ran, from New or
// SetRules.
func TestReportRules(t *testing.T) {
	if r := report.New(nil, nil, analyzer.Result{Rules: rules.All()}); len(r.Rules()) != len(rules.All()) {
		t.Errorf("New keeps %d rules of %d", len(r.Rules()), len(rules.All()))
	}
	pos := model.Pos{File: "n1/sysctl.txt", Line: 1}
	r := &report.Report{Findings: []analyzer.Finding{
		vfinding(rules.SynAckReset.Name, analyzer.Error, analyzer.Proven, nil, model.Pos{File: "n1/cap", Frame: 2}),
		vfinding(rules.EphemeralNodePortOverlap.Name, analyzer.Warning, analyzer.Likely, nil, pos),
	}}
	causes := func() int {
		var buf bytes.Buffer
		if err := report.Write(&buf, "json", r); err != nil {
			t.Fatal(err)
		}
		var got report.Report
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		return len(got.Verdict.Causes)
	}
	if n := causes(); n != 2 {
		t.Errorf("without rules: %d causes, want 2", n)
	}
	r.SetRules(rules.All())
	if n := causes(); n != 1 {
		t.Errorf("with the rules: %d causes, want 1", n)
	}
}
