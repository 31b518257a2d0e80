package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/fit"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// bigReport is a report of n findings, each with 400 pieces of evidence,
// a fact listing 400 names, long prose, and as many input warnings.
func bigReport(n int) *report.Report {
	var res analyzer.Result
	for i := range n {
		f := analyzer.Finding{Rule: "nodeport-collision", Severity: analyzer.Warning, Certainty: analyzer.Likely,
			Fingerprint: fmt.Sprintf("%016x", i), Title: fmt.Sprintf("NodePort %d/TCP is claimed twice", 30000+i),
			Summary: strings.Repeat("a summary of the finding that goes on; ", 20), Fix: "Give the Service its own `nodePort`.",
			Supports: []string{strings.Repeat("services.json:1 and services.json:2 give the port; ", 20)},
			Facts:    map[string]any{"owners": []string{}},
		}
		var owners []string
		for j := range 400 {
			owners = append(owners, fmt.Sprintf("team-%d/web-%03d", j%7, j))
			f.Evidence = append(f.Evidence, analyzer.Evidence{Pos: model.Pos{File: "services.json", Line: 5 + 33*j,
				Object: "Service " + owners[j]}, Note: "NodePort 30080/TCP of Service " + owners[j]})
		}
		f.Facts["owners"] = owners
		res.Findings = append(res.Findings, f)
	}
	var warns model.ErrorList
	for i := range 1000 {
		warns = append(warns, &model.Error{Pos: model.Pos{File: "x.txt", Line: i + 1}, Err: fmt.Errorf("syntax error %d", i)})
	}
	return report.New(&model.Snapshot{}, warns, res)
}

// TestMarkdownBounded holds the markdown under report.MaxMarkdown
// characters whatever the report, saying what it left out.
func TestMarkdownBounded(t *testing.T) {
	for _, n := range []int{1, 30, 400} {
		var b bytes.Buffer
		if err := report.Write(&b, "markdown", bigReport(n)); err != nil {
			t.Fatal(err)
		}
		md := b.String()
		if c := utf8.RuneCountInString(md); c >= report.MaxMarkdown {
			t.Errorf("%d findings: %d characters", n, c)
		}
		for _, want := range []string{"(10 of 400 pieces; all of them in `-o json`)", "… (400 in all)", "- and 980 more (`warnings` in `-o json`)"} {
			if !strings.Contains(md, want) {
				t.Errorf("%d findings: the markdown lacks %q", n, want)
			}
		}
		if n == 400 && !strings.Contains(md, "left out to keep this report under 60000 characters") {
			t.Errorf("400 findings: the markdown does not say it left findings out")
		}
	}
}

// TestTableBounded holds the table of a large report to a few lines a
// finding and a cap on the findings listed, at any width.
func TestTableBounded(t *testing.T) {
	for _, width := range []int{0, 80} {
		var b bytes.Buffer
		if err := report.WriteTable(&b, bigReport(400), report.TableStyle{Width: width}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if n := strings.Count(out, "\n"); n > 150 {
			t.Errorf("at %d: %d lines", width, n)
		}
		for _, want := range []string{"(+394 more)", "(+375 more findings: --detail, or -o json)"} {
			if !strings.Contains(out, want) {
				t.Errorf("at %d: the table lacks %q:\n%s", width, want, out)
			}
		}
	}
	var b bytes.Buffer
	if err := report.WriteTable(&b, bigReport(2), report.TableStyle{Width: 80, Detail: "2"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[2] WARNING", "Evidence (400):", "(+350 more: evidence in -o json)", "… (400 in all)"} {
		if !strings.Contains(strings.Join(strings.Fields(b.String()), " "), want) {
			t.Errorf("--detail=2 lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "[1] WARNING") {
		t.Errorf("--detail=2 prints finding 1")
	}
	if err := report.WriteTable(&b, bigReport(2), report.TableStyle{Detail: "3"}); err == nil {
		t.Errorf("--detail=3 of 2 findings: no error")
	}
}

// TestDetailLabelsHang holds that the continuation lines of a finding's
// labelled lines ("Would contradict it:", "Not ruled out:") hang under
// their text, and that a command's line is never wrapped.
func TestDetailLabelsHang(t *testing.T) {
	long := strings.Repeat("word ", 30)
	cmd := "iptables-save -t nat | grep -E '^-A KUBE-(SVC|SEP)-[A-Z0-9]+ .*--to-destination 10\\.244\\.1\\.7:8080'"
	r := labelledReport(long, cmd)
	var b bytes.Buffer
	if err := report.WriteTable(&b, r, report.TableStyle{Width: 60, Detail: "all"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		for _, label := range []string{"    Would contradict it: ", "    Not ruled out: "} {
			if strings.HasPrefix(l, label) && !strings.HasPrefix(lines[i+1], strings.Repeat(" ", len(label))) {
				t.Errorf("%q is not hung under %q", lines[i+1], label)
			}
		}
		if fit.Width(l) > 60 && strings.TrimSpace(l) != cmd && strings.TrimSpace(l) != "`"+cmd+"`" {
			t.Errorf("a line %d wide that is no command alone: %q", fit.Width(l), l)
		}
	}
	// The Fix's command, too wide, is alone on its line without its
	// backticks, so that the line pastes.
	if !strings.Contains(b.String(), "\n      "+cmd+"\n") || !strings.Contains(b.String(), "\n           "+cmd+"\n") ||
		strings.Contains(b.String(), "`") {
		t.Errorf("the command is not whole on its line:\n%s", b.String())
	}
}

// labelledReport is a report of one finding whose labelled lines hold
// long ("Would contradict it:", "Not ruled out:"), and whose way to
// decide and fix are the command cmd.
func labelledReport(long, cmd string) *report.Report {
	return report.New(nil, nil, analyzer.Result{Findings: []analyzer.Finding{{Rule: "r", Severity: analyzer.Warning,
		Certainty: analyzer.Unknown, Title: "t", Contradicts: []string{long}, Alternatives: []string{long},
		Decide: cmd + " (on the node)", Fix: "Run `" + cmd + "` there."}}})
}

// TestLabelsOnNarrowScreens holds that, where a labelled line leaves its
// text fewer than ten columns beside the label ("Would contradict it:"
// at 30 columns), the text goes under the label, and no line but a
// command's is wider than the screen.
func TestLabelsOnNarrowScreens(t *testing.T) {
	long := strings.Repeat("word ", 12)
	cmd := "iptables-save -t nat"
	r := labelledReport(long, cmd)
	for width := 12; width <= 40; width++ {
		var b bytes.Buffer
		if err := report.WriteTable(&b, r, report.TableStyle{Width: width, Detail: "all"}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, l := range strings.Split(out, "\n") {
			if fit.Width(l) > width && strings.TrimSpace(l) != cmd {
				t.Errorf("width %d: a line %d wide that is no command alone: %q", width, fit.Width(l), l)
			}
		}
		under := width-len("    Would contradict it: ") < 10
		if got := strings.Contains(out, "    Would contradict it:\n"); width >= 24 && got != under {
			t.Errorf("width %d: the text under its label %v, want %v:\n%s", width, got, under, out)
		}
	}
}

// TestVerdictSameConnection holds one line for a failure seen under a
// Service's address and a Pod's: the same client's SYNs, before and
// after the DNAT.
func TestVerdictSameConnection(t *testing.T) {
	syn := func(file string, frame int, note string) analyzer.Evidence {
		return analyzer.Evidence{Pos: model.Pos{File: file, Frame: frame}, Note: note}
	}
	findings := []analyzer.Finding{
		{Rule: "syn-unanswered", Severity: analyzer.Warning, Certainty: analyzer.Unknown, Title: "10.96.0.10:80 does not answer",
			Fingerprint: "a", Subject: map[string]string{"address": "10.96.0.10:80"},
			Evidence: []analyzer.Evidence{syn("c.pcap", 1, "SYN 10.244.0.5:53256 -> 10.96.0.10:80")}},
		{Rule: "syn-unanswered", Severity: analyzer.Warning, Certainty: analyzer.Unknown, Title: "10.244.0.5:8080 does not answer",
			Fingerprint: "b", Subject: map[string]string{"address": "10.244.0.5:8080"},
			Evidence: []analyzer.Evidence{syn("c.pcap", 2, "SYN 10.244.0.5:53256 -> 10.244.0.5:8080")}},
		{Rule: "icmp-unreachable", Severity: analyzer.Info, Certainty: analyzer.Likely, Title: "PMTU discovery works",
			Fingerprint: "c", Evidence: []analyzer.Evidence{syn("c.pcap", 1, "SYN 10.244.0.5:53256 -> 10.96.0.10:80")}},
	}
	v := report.NewVerdict(nil, findings, nil)
	want := "Unexplained: 10.96.0.10:80 does not answer [syn-unanswered]; also seen as 10.244.0.5:8080"
	if len(v.Causes) != 1 || v.Causes[0].Line != want || v.Others != 0 ||
		len(v.Causes[0].Related) != 1 || v.Causes[0].Related[0].Link != report.LinkSameConnection {
		t.Errorf("verdict %+v, want the one line %q and the info finding in none", v, want)
	}
}

// TestMarkdownRendering holds the Markdown's table column of certainty
// and an empty value written as words, not an empty code span; and the
// HTML's fix with its code spans as code.
func TestMarkdownRendering(t *testing.T) {
	r := report.New(nil, nil, analyzer.Result{Findings: []analyzer.Finding{{Rule: "r", Severity: analyzer.Warning,
		Certainty: analyzer.Likely, Title: "t", Fix: "Run `ss -lnt` on the node.",
		Facts: map[string]any{"reserved": ""}}}})
	var md, html bytes.Buffer
	if err := report.Write(&md, "markdown", r); err != nil {
		t.Fatal(err)
	}
	if err := report.Write(&html, "html", r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| Severity | Certainty | Rule | Finding |", "- reserved: _(empty)_\n"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), "``") {
		t.Errorf("markdown has an empty code span:\n%s", md.String())
	}
	if !strings.Contains(html.String(), "Run <code>ss -lnt</code> on the node.") || strings.Contains(html.String(), "`ss -lnt`") {
		t.Errorf("html shows the fix's backticks rather than code")
	}
}

// TestDecideLinesOnTheirOwn holds that a Decide of several lines prints,
// under "To decide, run:", each comment and each command on a line of its
// own, in their order, and on one line joined by "; " in markdown.
func TestDecideLinesOnTheirOwn(t *testing.T) {
	decide := "# on the node\nss -anp '( sport = :30450 )'\n# in the client Pod\nsysctl net.ipv4.ip_local_port_range"
	r := report.New(nil, nil, analyzer.Result{Findings: []analyzer.Finding{{Rule: "r", Severity: analyzer.Warning,
		Certainty: analyzer.Unknown, Title: "t", Decide: decide}}})
	var b bytes.Buffer
	if err := report.WriteTable(&b, r, report.TableStyle{Width: 80, Detail: "all"}); err != nil {
		t.Fatal(err)
	}
	want := "To decide, run:\n      # on the node\n      ss -anp '( sport = :30450 )'\n      # in the client Pod\n" +
		"      sysctl net.ipv4.ip_local_port_range\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("the table does not print the Decide's lines in order, each on its own:\n%s", b.String())
	}
	b.Reset()
	if err := report.Write(&b, "markdown", r); err != nil {
		t.Fatal(err)
	}
	if want := "`ss -anp '( sport = :30450 )'; sysctl net.ipv4.ip_local_port_range` (on the node; in the client Pod)"; !strings.Contains(b.String(), want) {
		t.Errorf("the markdown does not print %q:\n%s", want, b.String())
	}
}

// The first screen names a few candidate causes, each standing once, and
// counts the others by standing.
func TestCandidatesBrief(t *testing.T) {
	cands := []analyzer.Candidate{{Rule: "hairpin-drop", Standing: analyzer.CandidateFound}, {Rule: "rp-filter-drop", Standing: analyzer.CandidateOpen},
		{Rule: "network-policy-deny", Standing: analyzer.CandidateOpen}, {Rule: "mtu-blackhole", Standing: analyzer.CandidateOpen},
		{Rule: "conntrack-drops", Standing: analyzer.CandidateWeakened}}
	r := report.New(nil, nil, analyzer.Result{Findings: []analyzer.Finding{{Rule: "syn-unanswered", Severity: analyzer.Warning,
		Certainty: analyzer.Unknown, Title: "t", Candidates: cands}}})
	var b bytes.Buffer
	if err := report.WriteTable(&b, r, report.TableStyle{Width: 0}); err != nil {
		t.Fatal(err)
	}
	want := "  Candidates: hairpin-drop (found); rp-filter-drop, network-policy-deny (open); 2 more (1 open, 1 weakened; -o json lists them)\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("no %q in:\n%s", want, b.String())
	}
}
