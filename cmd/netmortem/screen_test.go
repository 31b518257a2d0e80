package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/netmortem/netmortem/internal/fit"
)

// screenReport is what the first-screen tests read of analyze -o json.
type screenReport struct {
	Verdict struct {
		Causes []struct {
			Line        string `json:"line"`
			Certainty   string `json:"certainty"`
			Fingerprint string `json:"fingerprint"`
			Rule        string `json:"rule"`
		} `json:"causes"`
	} `json:"verdict"`
	Findings []struct {
		Rule        string `json:"rule"`
		Severity    string `json:"severity"`
		Certainty   string `json:"certainty"`
		Fingerprint string `json:"fingerprint"`
		Fix         string `json:"fix"`
		Decide      string `json:"decide"`
		ExplainedBy string `json:"explained_by"`
		Evidence    []any  `json:"evidence"`
	} `json:"findings"`
	NextEvidence []struct {
		Shell string `json:"shell"`
	} `json:"next_evidence"`
	Incomplete []string `json:"incomplete"`
}

// screenJSON is the JSON report of dir.
func screenJSON(t *testing.T, dir string) screenReport {
	t.Helper()
	_, out, stderr := runCLI(t, "analyze", "-q", "--fail-on", "never", "-o", "json", dir)
	var rep screenReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%s: %v\n%s", dir, err, stderr)
	}
	return rep
}

// collapse is s with each run of white space one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// screenFix is fix as the table prints it in lines of room columns: a
// code span too wide for a line alone and bare, without its backticks.
func screenFix(fix string, room int) string {
	parts := strings.Split(fix, "`")
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i%2 == 0:
			b.WriteString(p)
		case fit.Width(p)+2 > room:
			b.WriteString(" " + p + " ")
		default:
			b.WriteString("`" + p + "`")
		}
	}
	return b.String()
}

// commandsOf are the commands of rep printed whole however wide: the
// commands to decide (without their notes), to collect, and the code
// spans of the fixes.
func commandsOf(rep screenReport) map[string]bool {
	m := map[string]bool{}
	for _, f := range rep.Findings {
		for _, l := range strings.Split(decideCommandOf(f.Decide), "\n") {
			if l != "" {
				m[l] = true
			}
		}
		for i, span := range strings.Split(f.Fix, "`") {
			if i%2 == 1 {
				m[span] = true
			}
		}
	}
	for _, e := range rep.NextEvidence {
		m[e.Shell] = true
	}
	return m
}

// decideCommandOf is a Decide without its "# " comment lines, or
// without the note in parentheses that ends a one-line Decide.
func decideCommandOf(decide string) string {
	if strings.Contains(decide, "\n") {
		var cmds []string
		for _, l := range strings.Split(decide, "\n") {
			if !strings.HasPrefix(l, "#") {
				cmds = append(cmds, l)
			}
		}
		return strings.Join(cmds, "\n")
	}
	if i := strings.LastIndex(decide, " ("); i > 0 && strings.HasSuffix(decide, ")") {
		cmd := decide[:i]
		if strings.Count(cmd, "'")%2 == 0 && strings.Count(cmd, "(") == strings.Count(cmd, ")") {
			return cmd
		}
	}
	return decide
}

// aloneOnLine reports whether line is one of cmds printed alone, or a
// code span of a fix alone with its punctuation.
func aloneOnLine(line string, cmds map[string]bool) bool {
	l := strings.TrimSpace(line)
	if cmds[l] {
		return true
	}
	if i, j := strings.Index(l, "`"), strings.LastIndex(l, "`"); i >= 0 && j > i && j-i >= len(l)-4 {
		return cmds[l[i+1:j]]
	}
	return false
}

// withoutCommands is out without its lines that are one of cmds alone
// (aloneOnLine), colour escapes left out.
func withoutCommands(out string, cmds map[string]bool) string {
	var keep []string
	for _, l := range strings.Split(ansi.ReplaceAllString(out, ""), "\n") {
		if !aloneOnLine(l, cmds) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// pastedCommands are the commands of the table out, as a reader pastes
// them: the line under "To decide, run:" after its comments, and each
// line of a collect list that is not a comment.
func pastedCommands(out string) (decide, collected []string) {
	lines := strings.Split(out, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		switch {
		case l == "To decide, run:":
			// Its comment and command lines, indented under it.
			indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " ")) + 1
			var cmds []string
			for i++; i < len(lines) && len(lines[i])-len(strings.TrimLeft(lines[i], " ")) > indent; i++ {
				if c := strings.TrimSpace(lines[i]); !strings.HasPrefix(c, "# ") {
					cmds = append(cmds, c)
				}
			}
			i--
			decide = append(decide, strings.Join(cmds, "\n"))
		case strings.HasPrefix(l, "To decide, collect") || strings.HasPrefix(l, "To let the skipped rules run, collect") ||
			strings.HasPrefix(l, "To decide, or to let the skipped rules run, collect"):
			// The heading may wrap; it ends with a colon.
			for !strings.HasSuffix(strings.TrimSpace(lines[i]), ":") {
				i++
			}
			for i++; i < len(lines) && strings.HasPrefix(lines[i], "  "); i++ {
				if c := strings.TrimSpace(lines[i]); !strings.HasPrefix(c, "# ") {
					collected = append(collected, c)
				}
			}
		}
	}
	return decide, collected
}

// TestFirstScreen holds, for every incident and seed fixture at 80
// columns, that the table starts with the line saying the analysis is
// incomplete when it is, then the verdict; that each cause's verdict
// line (with its certainty) and its fix are within the first 24 lines;
// that no line is wider than 80 columns but a command printed alone; and
// that no command is listed to collect when nothing is left undecided.
func TestFirstScreen(t *testing.T) {
	for _, name := range sampled(t, incidentsAndSeeds(t)) {
		dir := fixture(name)
		rep := screenJSON(t, dir)
		_, out, _ := runCLI(t, "analyze", "-q", "--color=never", "--width=80", dir)
		lines := strings.Split(out, "\n")
		if len(rep.Incomplete) > 0 && !strings.HasPrefix(out, "Incomplete: ") {
			t.Errorf("%s: incomplete, but the table starts with %q", name, lines[0])
		}
		first := collapse(strings.Join(lines[:min(24, len(lines))], " "))
		for _, c := range rep.Verdict.Causes {
			word := map[string]string{"proven": "Proven cause: ", "likely": "Likely cause: "}[c.Certainty]
			if word == "" {
				word = "Unexplained: "
			}
			head := collapse(c.Line)[:min(60, len(c.Line))]
			if !strings.HasPrefix(c.Line, word) || !strings.Contains(first, head) {
				t.Errorf("%s: the cause %q (%s) is not in the first 24 lines:\n%s", name, head, c.Certainty, out)
			}
			for _, f := range rep.Findings {
				if f.Fingerprint == c.Fingerprint && f.Rule == c.Rule && f.Fix != "" && !strings.Contains(first, "Fix: "+collapse(screenFix(f.Fix, 73))) {
					t.Errorf("%s: the fix of %s is not whole in the first 24 lines:\n%s", name, c.Rule, out)
				}
			}
		}
		if len(rep.Verdict.Causes) > 0 && len(rep.Incomplete) == 0 && !strings.HasPrefix(out, collapse(rep.Verdict.Causes[0].Line)[:20]) {
			t.Errorf("%s: the table does not start with the verdict:\n%s", name, out)
		}
		cmds := commandsOf(rep)
		for _, l := range lines {
			if fit.Width(l) > 80 && !aloneOnLine(l, cmds) {
				t.Errorf("%s: a line is %d wide and no command alone: %q", name, fit.Width(l), l)
			}
		}
		open := false
		for _, f := range rep.Findings {
			open = open || f.Severity != "info" && f.Certainty != "proven" && f.ExplainedBy == ""
		}
		if !open && strings.Contains(out, ", collect") {
			t.Errorf("%s: nothing is undecided, yet commands are listed to collect:\n%s", name, out)
		}
		if len(rep.Findings) == 0 && len(lines) > 3 {
			t.Errorf("%s: no findings in %d lines:\n%s", name, len(lines), out)
		}
	}
}

// TestPastedCommands pastes every command of the 80-column table of every
// fixture into sh -n, and holds it equal to one the JSON gives: a
// finding's decide (without its note) or a command of next_evidence.
func TestPastedCommands(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	pasted := 0
	all := incidentsAndSeeds(t)
	names := sampled(t, all)
	for _, name := range names {
		dir := fixture(name)
		rep := screenJSON(t, dir)
		var decides, shells []string
		for _, f := range rep.Findings {
			decides = append(decides, decideCommandOf(f.Decide))
		}
		for _, e := range rep.NextEvidence {
			shells = append(shells, e.Shell)
		}
		_, out, _ := runCLI(t, "analyze", "-q", "--color=never", "--width=80", dir)
		decide, collected := pastedCommands(out)
		for _, c := range decide {
			if !slices.Contains(decides, c) {
				t.Errorf("%s: %q to decide is no finding's decide in the JSON %q", name, c, decides)
			}
		}
		for _, c := range collected {
			if !slices.Contains(shells, c) {
				t.Errorf("%s: %q to collect is not in the JSON's next_evidence", name, c)
			}
		}
		for _, c := range append(decide, collected...) {
			pasted++
			if b, err := exec.Command("sh", "-n", "-c", c).CombinedOutput(); err != nil {
				t.Errorf("%s: %q does not paste into sh: %v %s", name, c, err, b)
			}
		}
	}
	if want := atLeast(20, len(names), len(all)); pasted < want {
		t.Errorf("only %d commands pasted from %d fixtures' tables, want %d", pasted, len(names), want)
	}
}

// nodePortBundle writes a bundle of n Services, as kubectl get svc -A -o
// json prints them, all given NodePort 30080 as the nodeport-collision
// incidents give one port to several Services.
func nodePortBundle(t *testing.T, n int) string {
	t.Helper()
	var items []map[string]any
	for i := range n {
		ip := fmt.Sprintf("10.96.%d.%d", i/250, i%250+1)
		items = append(items, map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": fmt.Sprintf("web-%03d", i), "namespace": fmt.Sprintf("team-%d", i%7),
				"uid": fmt.Sprintf("6f1c0d2e-0000-4000-8000-%012d", i), "resourceVersion": fmt.Sprint(1000 + i)},
			"spec": map[string]any{
				"clusterIP": ip, "clusterIPs": []string{ip}, "type": "NodePort", "externalTrafficPolicy": "Cluster",
				"internalTrafficPolicy": "Cluster", "ipFamilies": []string{"IPv4"}, "ipFamilyPolicy": "SingleStack",
				"ports":           []map[string]any{{"name": "http", "nodePort": 30080, "port": 80, "protocol": "TCP", "targetPort": 8080}},
				"selector":        map[string]string{"app": fmt.Sprintf("web-%03d", i)},
				"sessionAffinity": "None",
			},
			"status": map[string]any{"loadBalancer": map[string]any{}},
		})
	}
	b, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items,
		"metadata": map[string]string{"resourceVersion": ""}}, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "services.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestNodePortBundleBounded holds the outputs of a bundle of 300 Services
// sharing one NodePort bounded: the table under 150 lines at 80 columns,
// the Markdown under 60,000 characters, each saying how much it left out.
func TestNodePortBundleBounded(t *testing.T) {
	dir := nodePortBundle(t, 300)
	rep := screenJSON(t, dir)
	most := 0
	for _, f := range rep.Findings {
		most = max(most, len(f.Evidence))
	}
	if len(rep.Findings) == 0 || most < 300 {
		t.Fatalf("%d findings, at most %d pieces of evidence: want the collision of 300 Services", len(rep.Findings), most)
	}
	t.Setenv("COLUMNS", "80")
	_, out, _ := runCLI(t, "analyze", "-q", "--color=never", dir)
	if n := strings.Count(out, "\n"); n >= 150 {
		t.Errorf("the table is %d lines:\n%s", n, out)
	}
	if !strings.Contains(out, fmt.Sprintf("(+%d more)", most-6)) {
		t.Errorf("the table does not say how much evidence it left out:\n%s", out)
	}
	_, detail, _ := runCLI(t, "analyze", "-q", "--color=never", "--detail=1", dir)
	if n := strings.Count(detail, "\n"); n >= 150 || !strings.Contains(detail, fmt.Sprintf("Evidence (%d):", most)) {
		t.Errorf("--detail=1 is %d lines, or does not count the evidence:\n%s", n, detail)
	}
	_, md, _ := runCLI(t, "analyze", "-q", "-o", "markdown", dir)
	if n := utf8.RuneCountInString(md); n >= 60000 {
		t.Errorf("the Markdown is %d characters", n)
	}
	if !strings.Contains(md, fmt.Sprintf("of %d pieces", most)) {
		t.Errorf("the Markdown does not say how much evidence it left out:\n%.3000s", md)
	}
}

// TestScreenVerdict holds the verdict to what its findings establish: a
// failure seen under a Service's address and a Pod's (the hairpin without
// masquerade) is one line; information alone (PMTU discovery working) is
// no cause; and a false alarm shown as such is information, exit 0.
func TestScreenVerdict(t *testing.T) {
	rep := screenJSON(t, fixture("incidents/nat-hairpin-nomasq"))
	if len(rep.Verdict.Causes) != 1 || !strings.HasPrefix(rep.Verdict.Causes[0].Line, "Unexplained: ") ||
		!strings.Contains(rep.Verdict.Causes[0].Line, "also seen as 10.244.0.5:8080") {
		t.Errorf("nat-hairpin-nomasq: verdict %+v, want one unexplained failure also seen as 10.244.0.5:8080", rep.Verdict.Causes)
	}
	rep = screenJSON(t, fixture("incidents/mtu-blackhole-control"))
	if len(rep.Findings) == 0 || len(rep.Verdict.Causes) != 0 {
		t.Errorf("mtu-blackhole-control: %d findings, verdict %+v: want information and no cause", len(rep.Findings), rep.Verdict.Causes)
	}
	t.Setenv("COLUMNS", "80")
	_, out, _ := runCLI(t, "analyze", "-q", fixture("incidents/mtu-blackhole-control"))
	if !strings.HasPrefix(out, "Nothing found broken: ") || strings.Contains(out, "cause:") {
		t.Errorf("mtu-blackhole-control: the table does not say nothing is broken:\n%s", out)
	}
	code, _, stderr := runCLI(t, "analyze", "-q", fixture("incidents/apiserver-affinity"))
	if code != exitOK {
		t.Errorf("apiserver-affinity, a false alarm: exit %d, want %d; stderr:\n%s", code, exitOK, stderr)
	}
}

// TestDetailFlag holds that --detail prints every finding in full,
// --detail=N and --detail=FINGERPRINT one, and that one that names no
// finding is a usage error.
func TestDetailFlag(t *testing.T) {
	dir := fixture("incidents/nat-hairpin")
	rep := screenJSON(t, dir)
	_, all, _ := runCLI(t, "analyze", "-q", "--detail", dir)
	for _, f := range rep.Findings {
		if !strings.Contains(all, "Fingerprint: "+f.Fingerprint) {
			t.Errorf("--detail lacks finding %s:\n%s", f.Fingerprint, all)
		}
	}
	_, two, _ := runCLI(t, "analyze", "-q", "--detail=2", dir)
	_, byPrint, _ := runCLI(t, "analyze", "-q", "--detail="+rep.Findings[1].Fingerprint[:6], dir)
	if !strings.HasPrefix(two, "[2] ") || two != byPrint || strings.Contains(two, "[1] ") {
		t.Errorf("--detail=2:\n%s\n--detail=%s:\n%s", two, rep.Findings[1].Fingerprint[:6], byPrint)
	}
	code, out, stderr := runCLI(t, "analyze", "-q", "--detail=9", dir)
	if code != exitUsage || out != "" || !strings.Contains(stderr, `"9" is neither a finding's number`) {
		t.Errorf("--detail=9: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}
