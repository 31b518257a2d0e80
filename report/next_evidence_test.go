package report_test

import (
	"bytes"
	"html"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/collect"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// nextEvidenceCase is a snapshot of two nodes (node1 with sysctl and a
// capture, node2 with a capture only), a skipped rule, findings with
// Decides and the rules that were run.
func nextEvidenceCase() (*model.Snapshot, []*analyzer.Rule, analyzer.Result) {
	snap := &model.Snapshot{Inputs: []model.Input{
		{Path: "node1/sysctl.txt", Kind: model.KindSysctl, Node: "node1"},
		{Path: "node1/capture.pcap", Kind: model.KindCapture, Node: "node1"},
		{Path: "node2/capture.pcap", Kind: model.KindCapture, Node: "node2"},
		{Path: "node2/conntrack.txt", Kind: model.KindConntrack, Node: "node2", Skipped: "unrecognized content"},
	}}
	// resets and tables explain one symptom, objects and conns another:
	// a skipped rule is worth its commands when an undecided finding
	// shows a symptom it could explain.
	resets := &analyzer.Symptom{Name: "resets", Doc: "connections are reset"}
	hangs := &analyzer.Symptom{Name: "hangs", Doc: "connections hang"}
	rules := []*analyzer.Rule{
		{Name: "resets", Needs: []model.Kind{model.KindCapture}, Uses: []model.Kind{model.KindIPVS, model.KindSysctl},
			Symptoms: []analyzer.SymptomRef{resets.At(10)}},
		{Name: "tables", Needs: []model.Kind{model.KindNetfilter}, Symptoms: []analyzer.SymptomRef{resets.At(20)}},
		{Name: "conns", NeedsAny: []model.Kind{model.KindConntrack, model.KindSockets}, Symptoms: []analyzer.SymptomRef{hangs.At(20)}},
		{Name: "objects", Needs: []model.Kind{model.KindCapture}, Uses: []model.Kind{model.KindKube},
			Symptoms: []analyzer.SymptomRef{hangs.At(10)}},
	}
	res := analyzer.Result{
		Findings: []analyzer.Finding{
			{Rule: "resets", Fingerprint: "aaaa", Severity: analyzer.Warning, Certainty: analyzer.Likely, Subject: map[string]string{"node": "node2"},
				Decide: "ipvsadm -Ln (on the client's node: the virtual services of its ports)"},
			{Rule: "objects", Fingerprint: "bbbb", Severity: analyzer.Warning, Certainty: analyzer.Unknown,
				Decide: "kubectl -n web describe pod api-0 (the Unhealthy events)"},
			{Rule: "objects", Fingerprint: "cccc", Severity: analyzer.Error, Certainty: analyzer.Proven, Decide: "ss -tanpi"},
		},
		Skipped: []analyzer.Skipped{
			{Rule: "tables", Missing: []model.Kind{model.KindNetfilter}},
			{Rule: "conns", AnyOf: []model.Kind{model.KindConntrack, model.KindSockets}},
		},
	}
	return snap, rules, res
}

func TestNextEvidenceFor(t *testing.T) {
	snap, rules, res := nextEvidenceCase()
	got := report.NextEvidenceFor(snap, rules, res)
	byShell := map[string]report.NextEvidence{}
	var order []string
	for _, e := range got {
		if _, dup := byShell[e.Shell]; dup {
			t.Errorf("%q listed twice", e.Shell)
		}
		byShell[e.Shell] = e
		order = append(order, e.Shell)
	}
	want := func(name string) report.NextEvidence {
		t.Helper()
		c, ok := collect.Lookup(name)
		if !ok {
			t.Fatalf("no catalog command %s", name)
		}
		e, ok := byShell[c.Shell]
		if !ok {
			t.Fatalf("next evidence %v lacks %s (%q)", order, name, c.Shell)
		}
		if e.Command != name || e.Scope != c.Scope {
			t.Errorf("%s: command %q scope %q, want %q %q", name, e.Command, e.Scope, name, c.Scope)
		}
		return e
	}

	// A Likely finding's Decide that is a catalog command with a note:
	// the command, the note, on the finding's node.
	ipvs := want("ipvsadm")
	if !slices.Equal(ipvs.Decides, []string{"aaaa"}) || !slices.Equal(ipvs.Notes, []string{"on the client's node: the virtual services of its ports"}) ||
		ipvs.Kind != model.KindIPVS || !slices.Contains(ipvs.Nodes, "node2") {
		t.Errorf("ipvsadm: %+v", ipvs)
	}
	// The kind the rule uses and the bundle lacks decides it too.
	// A variant of a kind's command (ipvsadm -Ln --stats beside ipvsadm
	// -Ln) is not asked for: the first command gives the kind.
	if stats, _ := collect.Lookup("ipvsadm-stats"); hasShell(byShell, stats.Shell) {
		t.Errorf("next evidence asks for the variant %q", stats.Shell)
	}
	// A Decide the collector does not run is carried as it is, its note
	// apart.
	kubectl, ok := byShell["kubectl -n web describe pod api-0"]
	if !ok || kubectl.Command != "" || kubectl.Scope != collect.ScopeCluster || !slices.Equal(kubectl.Decides, []string{"bbbb"}) ||
		!slices.Equal(kubectl.Notes, []string{"the Unhealthy events"}) {
		t.Errorf("kubectl decide: %+v (found %v)", kubectl, ok)
	}
	// A proven finding asks for nothing.
	for _, e := range got {
		if slices.Contains(e.Decides, "cccc") {
			t.Errorf("%q decides the proven finding cccc", e.Shell)
		}
	}
	// A skipped rule: every command of the kind it lacks that is not a
	// variant, on every node.
	for _, name := range []string{"iptables-save", "nft-ruleset"} {
		e := want(name)
		if !slices.Equal(e.Unblocks, []string{"tables"}) || !slices.Equal(e.Nodes, []string{"node1", "node2"}) {
			t.Errorf("%s: %+v, want it to unblock tables on node1, node2", name, e)
		}
	}
	for _, name := range []string{"conntrack-stats", "conntrack-list", "ss-tanpi", "ss-lntup"} {
		if e := want(name); !slices.Equal(e.Unblocks, []string{"conns"}) {
			t.Errorf("%s: %+v, want it to unblock conns", name, e)
		}
	}
	// A kind some nodes lack, which a rule that ran uses: asked of those.
	if e := want("sysctl-net"); !slices.Equal(e.Nodes, []string{"node2"}) || !slices.Equal(e.Joins, []string{"resets"}) {
		t.Errorf("sysctl-net: %+v, want node2 only, joined by resets", e)
	}
	if e := want("kubectl-objects"); !slices.Equal(e.Joins, []string{"objects"}) || len(e.Nodes) != 0 {
		t.Errorf("kubectl-objects: %+v, want it joined by objects, no nodes", e)
	}
	if _, ok := byShell[mustShell(t, "capture")]; ok {
		t.Error("the capture every node has is asked for")
	}
	// Those that decide first, then those that unblock, then the others.
	rank := func(e report.NextEvidence) int {
		switch {
		case len(e.Decides) > 0:
			return 0
		case len(e.Unblocks) > 0:
			return 1
		}
		return 2
	}
	if !slices.IsSortedFunc(got, func(a, b report.NextEvidence) int { return rank(a) - rank(b) }) {
		t.Errorf("order %v: deciding, unblocking, joining", order)
	}

	// Without the rules: the skipped rules and Decides only.
	for _, e := range report.NextEvidenceFor(snap, nil, res) {
		if len(e.Joins) > 0 {
			t.Errorf("without rules, %q is joined by %v", e.Shell, e.Joins)
		}
	}
	if len(report.NextEvidenceFor(nil, nil, analyzer.Result{})) != 0 {
		t.Error("nothing to ask of an empty analysis")
	}
}

func mustShell(t *testing.T, name string) string {
	t.Helper()
	c, ok := collect.Lookup(name)
	if !ok {
		t.Fatalf("no catalog command %s", name)
	}
	return c.Shell
}

// TestNextEvidenceWritten holds that the table and markdown list the
// commands that decide or unblock, with where and why, and count the
// others; and that JSON carries them all.
func TestNextEvidenceWritten(t *testing.T) {
	snap, rules, res := nextEvidenceCase()
	r := report.New(snap, nil, res)
	r.SetRules(rules)
	r.NextEvidence = report.NextEvidenceFor(snap, rules, res)
	var table, md, js bytes.Buffer

	for f, b := range map[string]*bytes.Buffer{"table": &table, "markdown": &md, "json": &js} {
		if err := report.Write(b, f, r); err != nil {
			t.Fatal(err)
		}
	}
	// The commands to decide the verdict's causes come with them; the
	// list adds what decides the others or lets run a skipped rule that
	// could explain them, one command a kind of evidence, at most three.
	for _, want := range []string{
		"Likely cause:  [resets]\n  To decide, run:\n    # on the client's node: the virtual services of its ports\n    ipvsadm -Ln\n",
		"To decide, or to let the skipped rules run, collect (3 of 4; all of them: netmortem inspect, or next_evidence in -o json):\n",
		"  # once, with kubectl; decides [2] objects\n  kubectl get nodes,",
		"  # on node1, node2; lets tables run\n  iptables-save -c\n",
		"  # on node1, node2; lets conns run\n  conntrack -S\n",
	} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	for _, not := range []string{"sysctl -a", "nft list ruleset", "kubectl version", "ss -tanpi"} {
		if strings.Contains(table.String(), not) {
			t.Errorf("table lists %q, which a rule that ran would only join, or of a kind listed already:\n%s", not, table.String())
		}
	}
	for _, want := range []string{"### To decide, or to let the skipped rules run, collect\n", "- `iptables-save -c`: on node1, node2; lets tables run",
		"- `conntrack -S`: on node1, node2; lets conns run"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), "- `ipvsadm -Ln`") {
		t.Errorf("markdown lists the command its finding gives to decide it again:\n%s", md.String())
	}
	for _, want := range []string{`"next_evidence": [`, `"command": "sysctl-net"`, `"joins": [`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("json lacks %q", want)
		}
	}
}

// TestNextEvidenceHeading holds that the section's heading says what its
// commands are for: deciding findings, letting skipped rules run, or both.
func TestNextEvidenceHeading(t *testing.T) {
	snap, rules, res := nextEvidenceCase()
	for _, c := range []struct {
		entries []report.NextEvidence
		want    string
	}{
		{[]report.NextEvidence{{Shell: "ss -tanpi", Scope: "cluster", Decides: []string{"aaaa"}}}, "To decide, collect:\n"},
		{[]report.NextEvidence{{Shell: "ss -tanpi", Scope: "cluster", Unblocks: []string{"conns"}}}, "To let the skipped rules run, collect:\n"},
		{[]report.NextEvidence{{Shell: "ss -tanpi", Scope: "cluster", Decides: []string{"aaaa"}}, {Shell: "conntrack -S", Scope: "cluster", Unblocks: []string{"conns"}}},
			"To decide, or to let the skipped rules run, collect:\n"},
	} {
		r := report.New(snap, nil, res)
		r.SetRules(rules)
		r.NextEvidence = c.entries
		var table, md bytes.Buffer
		if err := report.Write(&table, "table", r); err != nil {
			t.Fatal(err)
		}
		if err := report.Write(&md, "markdown", r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(table.String(), "\n"+c.want) {
			t.Errorf("table lacks %q:\n%s", c.want, table.String())
		}
		if mdWant := "### " + strings.TrimSuffix(c.want, ":\n") + "\n"; !strings.Contains(md.String(), mdWant) {
			t.Errorf("markdown lacks %q:\n%s", mdWant, md.String())
		}
	}
}

func hasShell(m map[string]report.NextEvidence, shell string) bool {
	_, ok := m[shell]
	return ok
}

// TestDecidePasteable holds that a finding's Decide, a command line
// followed by a note in parentheses, prints as a line that works when
// pasted into a shell: in the table, the note as a comment; in Markdown
// and HTML, the command as code and the note after it; in "To decide,
// collect", the command alone, the note among what to look for.
func TestDecidePasteable(t *testing.T) {
	decides := map[string]string{
		"aaaa": `sysctl -a 2>/dev/null | grep '^net\.' (net.bridge.bridge-nf-call-iptables)`,
		"bbbb": "ip route get 10.0.0.9 (on node1)",
		"cccc": `ps -eo args | grep -E '^[^ ]*(kubelet|kube-proxy)( |$)' (kubelet's flags)`,
		"dddd": `ps -eo args | grep -E '^[^ ]*(kubelet|kube-proxy)( |$)'`,
	}
	snap := &model.Snapshot{Inputs: []model.Input{{Path: "node1/capture.pcap", Kind: model.KindCapture, Node: "node1"}}}
	var res analyzer.Result
	for _, fp := range []string{"aaaa", "bbbb", "cccc", "dddd"} {
		res.Findings = append(res.Findings, analyzer.Finding{Rule: "r-" + fp, Fingerprint: fp, Severity: analyzer.Warning,
			Certainty: analyzer.Unknown, Title: fp, Decide: decides[fp]})
	}
	r := report.New(snap, nil, res)
	r.NextEvidence = report.NextEvidenceFor(snap, nil, res)
	out := map[string]*bytes.Buffer{"table": {}, "markdown": {}, "html": {}}
	for f, b := range out {
		if err := report.Write(b, f, r); err != nil {
			t.Fatal(err)
		}
	}
	// In the table, the command has a line of its own under "To decide,
	// run:", after its note as a comment; a command printed already is
	// not printed again (dddd's is cccc's).
	var lines []string
	table := strings.Split(out["table"].String(), "\n")
	for i, l := range table {
		if strings.TrimSpace(l) != "To decide, run:" {
			continue
		}
		note := ""
		for i++; strings.HasPrefix(strings.TrimSpace(table[i]), "# "); i++ {
			note = "  " + strings.TrimSpace(table[i])
		}
		lines = append(lines, strings.TrimSpace(table[i])+note)
	}
	want := []string{
		`sysctl -a 2>/dev/null | grep '^net\.'  # net.bridge.bridge-nf-call-iptables`,
		"ip route get 10.0.0.9  # on node1",
		`ps -eo args | grep -E '^[^ ]*(kubelet|kube-proxy)( |$)'  # kubelet's flags`,
	}
	if !slices.Equal(lines, want) {
		t.Errorf("table's decide lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range lines {
		if err := exec.Command("sh", "-n", "-c", l).Run(); err != nil {
			t.Errorf("%q: not a shell command line: %v", l, err)
		}
	}
	for _, w := range []string{"To decide, run: `sysctl -a 2>/dev/null | grep '^net\\.'` (net.bridge.bridge-nf-call-iptables)",
		"To decide, run: `ip route get 10.0.0.9` (on node1)"} {
		if !strings.Contains(out["markdown"].String(), w) {
			t.Errorf("markdown lacks %q", w)
		}
	}
	if w := `<code class="cmd">ip route get 10.0.0.9</code> (on node1)`; !strings.Contains(out["html"].String(), w) {
		t.Errorf("html lacks %q", w)
	}
	var shells []string
	for _, e := range r.NextEvidence {
		shells = append(shells, e.Shell)
		if e.Shell == "ip route get 10.0.0.9" && !slices.Equal(e.Notes, []string{"on node1"}) {
			t.Errorf("%s: notes %q, want [on node1]", e.Shell, e.Notes)
		}
	}
	if !slices.Contains(shells, "ip route get 10.0.0.9") || !slices.Contains(shells, `ps -eo args | grep -E '^[^ ]*(kubelet|kube-proxy)( |$)'`) {
		t.Errorf("next evidence: %q, want the command lines without their notes", shells)
	}
}

// TestNextEvidenceExplained holds that a finding explained by another
// rule's proven finding asks for nothing: its cause is proven there.
func TestNextEvidenceExplained(t *testing.T) {
	snap := &model.Snapshot{Inputs: []model.Input{{Path: "node1/capture.pcap", Kind: model.KindCapture, Node: "node1"}}}
	res := analyzer.Result{Findings: []analyzer.Finding{
		{Rule: "cause", Fingerprint: "aaaa", Severity: analyzer.Error, Certainty: analyzer.Proven},
		{Rule: "symptom", Fingerprint: "bbbb", Severity: analyzer.Warning, Certainty: analyzer.Unknown,
			ExplainedBy: "cause: the title", Decide: "ip route get 10.0.0.9 (on node1)"},
		{Rule: "other", Fingerprint: "cccc", Severity: analyzer.Warning, Certainty: analyzer.Unknown,
			Decide: "ip route get 10.0.0.7 (on node1)"},
	}}
	var shells []string
	for _, e := range report.NextEvidenceFor(snap, nil, res) {
		shells = append(shells, e.Shell)
	}
	if !slices.Equal(shells, []string{"ip route get 10.0.0.7"}) {
		t.Errorf("next evidence: %q, want only the unexplained finding's command", shells)
	}
}

// TestNextEvidenceHTML holds that the HTML report's collect section lists
// the commands the markdown lists, in its order: those that would change
// the answer, not every command of next_evidence (the rest stay in the
// JSON).
func TestNextEvidenceHTML(t *testing.T) {
	snap, rules, res := nextEvidenceCase()
	r := report.New(snap, nil, res)
	r.SetRules(rules)
	r.NextEvidence = report.NextEvidenceFor(snap, rules, res)
	var md, page bytes.Buffer
	if err := report.Write(&md, "markdown", r); err != nil {
		t.Fatal(err)
	}
	if err := report.Write(&page, "html", r); err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, line := range strings.Split(md.String(), "\n") {
		if cmd, ok := strings.CutPrefix(line, "- `"); ok {
			if cmd, _, ok = strings.Cut(cmd, "`: "); ok {
				want = append(want, cmd)
			}
		}
	}
	_, sec, _ := strings.Cut(page.String(), `<section id="collect">`)
	sec, _, _ = strings.Cut(sec, "</section>")
	for _, part := range strings.Split(sec, "<code>$ ")[1:] {
		cmd, _, _ := strings.Cut(part, "</code>")
		got = append(got, html.UnescapeString(cmd))
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("the HTML lists %q to collect, the markdown %q", got, want)
	}
}
