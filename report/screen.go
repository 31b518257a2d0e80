package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/model"
)

// The table format is read at a terminal, its first screen first: after
// the line saying the analysis is incomplete, when it is, comes the
// verdict, each root cause with the evidence that shows it on one line,
// its fix and, when it is not proven, the command that would decide it;
// then the findings, one heading each with its evidence positions capped
// (compactFinding); then the few commands whose output would change the
// answer (screenCollect). The full account of a finding, its facts and
// every piece of evidence, is TableStyle.Detail's.

// Bounds of the table format.
const (
	// maxScreenFindings is how many findings the compact list shows.
	maxScreenFindings = 25
	// maxScreenEvidence is how many evidence positions a finding's
	// compact line shows.
	maxScreenEvidence = 6
	// maxScreenCollect is how many commands the collect list shows.
	maxScreenCollect = 3
	// maxDetailEvidence and maxFactItems bound a finding's full account:
	// its evidence, and the items of a list among its facts.
	maxDetailEvidence = 50
	maxFactItems      = 20
	// maxScreenReasons is how many reasons for incompleteness are listed.
	maxScreenReasons = 10
)

// writeScreen writes r in the table format laid out by st.
func writeScreen(s *screen, r *Report, st TableStyle) error {
	sel, err := selectDetail(r, st.Detail)
	if err != nil {
		return err
	}
	if len(r.Incomplete) > 0 && (len(r.Findings) > 0 || sel != nil) {
		s.add(prose("", fmt.Sprintf("Incomplete: the findings cover what was read only (%d %s, at the end).",
			len(r.Incomplete), plural(len(r.Incomplete), "reason", "reasons"))), blank)
	}
	if sel != nil {
		for k, i := range sel {
			if k > 0 {
				s.add(blank)
			}
			s.add(fullFinding(r, i)...)
		}
		printed := map[string]bool{}
		for _, i := range sel {
			printed[decideCommand(r.Findings[i])] = true
		}
		s.add(screenCollect(r, printed)...)
		writeScreenEnd(s, r)
		return nil
	}
	if len(r.Findings) == 0 {
		n, wn := countRead(r), len(r.Warnings)
		if len(r.Incomplete) > 0 {
			s.add(prose("", fmt.Sprintf("No findings in what could be read (%d %s read, %d %s), but the analysis is incomplete:",
				n, plural(n, "input", "inputs"), wn, plural(wn, "warning", "warnings"))))
			writeReasons(s, r)
		} else {
			s.add(prose("", fmt.Sprintf("No findings (%d %s read, %d %s).", n, plural(n, "input", "inputs"), wn, plural(wn, "warning", "warnings"))))
		}
		writeScreenSuppressed(s, r)
		return nil
	}
	leads := writeScreenVerdict(s, r)
	if s.root != "" {
		s.add(prose("", "Bundle "+escape.String(s.root)+" (paths below are relative to it)"), blank)
	}
	s.add(prose("", fmt.Sprintf("Findings (%d):", len(r.Findings))))
	printed := map[string]bool{}
	for i := range r.Findings {
		if leads[i] {
			printed[decideCommand(r.Findings[i])] = true
		}
	}
	for i := range r.Findings {
		if i == maxScreenFindings {
			s.add(prose("", fmt.Sprintf("(+%d more findings: --detail, or -o json)", len(r.Findings)-i)))
			break
		}
		s.add(compactFinding(r, i, printed)...)
	}
	s.add(screenCollect(r, printed)...)
	s.add(blank, prose("", "Full account: --detail=N for finding N (or its fingerprint), --detail for all."))
	writeScreenEnd(s, r)
	return nil
}

// writeScreenEnd writes why the analysis is incomplete and the suppressed
// findings.
func writeScreenEnd(s *screen, r *Report) {
	if len(r.Incomplete) > 0 {
		s.add(blank, prose("", "The analysis is incomplete: the findings cover only what was read and analyzed:"))
		writeReasons(s, r)
	}
	writeScreenSuppressed(s, r)
}

// writeReasons lists why the analysis is incomplete, one reason a line.
func writeReasons(s *screen, r *Report) {
	for i, why := range r.Incomplete {
		if i == maxScreenReasons {
			s.add(prose("  ", fmt.Sprintf("(+%d more: incomplete in -o json)", len(r.Incomplete)-i)))
			break
		}
		s.add(prose("  - ", escape.String(why)))
	}
}

// writeScreenSuppressed ends the table format with the suppressed
// findings.
func writeScreenSuppressed(s *screen, r *Report) {
	if len(r.Suppressed) > 0 {
		s.add(blank, prose("", "Suppressed:"))
		for _, x := range r.Suppressed {
			s.add(prose("  ", escape.String(strings.ToUpper(x.Severity.String())+" "+x.Rule+": "+x.Title)),
				prose("      ", escape.String(why(x)+" (fingerprint "+x.Fingerprint+")")))
		}
	}
	if n := suppressedNote(r); n != "" {
		s.add(blank, prose("", escape.String(n)+"."))
	}
}

// writeScreenVerdict writes the verdict: each cause's line, the evidence
// that shows it, its fix and what would decide it. It returns which
// findings lead a cause, by index, whose commands to decide are printed.
func writeScreenVerdict(s *screen, r *Report) map[int]bool {
	leads := map[int]bool{}
	if len(r.Verdict.Causes) == 0 {
		s.add(prose("", fmt.Sprintf("Nothing found broken: %s for information only.",
			plural(len(r.Findings), "the finding is", strconv.Itoa(len(r.Findings))+" findings are"))), blank)
		return leads
	}
	for _, c := range r.Verdict.Causes {
		i := leadIndex(r, c)
		s.add(sline{lead: "", cont: "  ", text: escape.String(c.Line), sev: c.Severity, most: 4})
		if i < 0 {
			s.add(blank)
			continue
		}
		leads[i] = true
		f := r.Findings[i]
		if shown := shownBy(f); shown != "" {
			l := prose("  Shown by: ", escape.String(shown))
			l.most = 2
			s.add(l)
		}
		if f.Fix != "" {
			s.add(prose("  Fix: ", escape.String(f.Fix)))
		}
		if c := candidatesBrief(f); c != "" && f.Certainty != analyzer.Proven {
			s.add(prose("  Candidates: ", escape.String(c)))
		}
		s.add(decideLines("  ", f)...)
		s.add(blank)
	}
	if r.Verdict.Others > 0 {
		s.add(prose("", "and "+plural(r.Verdict.Others, "1 other finding", strconv.Itoa(r.Verdict.Others)+" other findings")+", below"), blank)
	}
	return leads
}

// leadIndex is the index of the finding that leads c, or -1.
func leadIndex(r *Report, c VerdictCause) int {
	for i, f := range r.Findings {
		if f.Rule == c.Rule && f.Title == c.Title && f.Fingerprint == c.Fingerprint {
			return i
		}
	}
	return -1
}

// shownBy is the one line of evidence the verdict gives for a cause: the
// first of what shows it, else its first piece of evidence.
func shownBy(f analyzer.Finding) string {
	if len(f.Supports) > 0 {
		return f.Supports[0]
	}
	if len(f.Evidence) > 0 {
		return f.Evidence[0].String()
	}
	return ""
}

// decideLines are the command that would decide f's cause, when it is
// not proven and no other finding explains it: a label, what to look for
// as a shell comment, and the command on a line of its own.
func decideLines(indent string, f analyzer.Finding) []sline {
	if decideCommand(f) == "" {
		return nil
	}
	return append([]sline{prose(indent, "To decide, run:")}, decideShell(indent+"  ", f.Decide)...)
}

// decideCommand is the command that would decide f's cause, as
// decideLines prints it, or "" when it prints none.
func decideCommand(f analyzer.Finding) string {
	if f.Decide == "" || f.Certainty == analyzer.Proven || f.ExplainedBy != "" {
		return ""
	}
	command, _ := decideParts(f.Decide)
	return command
}

// compactFinding is finding i of r in the findings list: its heading,
// what explains it, its evidence positions (at most maxScreenEvidence)
// and the command to decide it, unless it is among printed already
// (which it is added to).
func compactFinding(r *Report, i int, printed map[string]bool) []sline {
	f := r.Findings[i]
	out := []sline{heading(i, f)}
	if f.ExplainedBy != "" {
		out = append(out, prose("    Explained by: ", escape.String(explainedRef(r, f.ExplainedBy))))
	}
	if len(f.Evidence) > 0 {
		l := prose("    Evidence: ", escape.String(positions(f.Evidence, maxScreenEvidence)))
		l.most = 2
		out = append(out, l)
	}
	if c := decideCommand(f); c != "" && !printed[c] {
		printed[c] = true
		out = append(out, decideLines("    ", f)...)
	}
	return out
}

// heading is a finding's first line: "[2] WARNING (cause unknown)
// syn-unanswered: TITLE".
func heading(i int, f analyzer.Finding) sline {
	return sline{cont: "    ", sev: f.Severity, most: 4, text: escape.String(fmt.Sprintf("[%d] %s%s %s: %s",
		i+1, strings.ToUpper(f.Severity.String()), certaintyTag(f.Certainty), f.Rule, f.Title))}
}

// explainedRef names the finding "rule: title" of r: "[1] hairpin-drop",
// or the text itself when none is.
func explainedRef(r *Report, ref string) string {
	for i, f := range r.Findings {
		if f.Rule+": "+f.Title == ref {
			return fmt.Sprintf("[%d] %s", i+1, f.Rule)
		}
	}
	return ref
}

// positions lists evidence positions, at most most of them then "(+N
// more)", each position in the file of the one before it without the
// file's name: "capture.pcap#frame=1, #frame=2, sysctl.txt:41".
func positions(ev []analyzer.Evidence, most int) string {
	var b strings.Builder
	prev := ""
	for i, e := range ev {
		if i == most {
			fmt.Fprintf(&b, " (+%d more)", len(ev)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		p := e.Pos
		if p.File != "" && p.File == prev {
			p.File = ""
		}
		prev = e.Pos.File
		if p.File == "" && (p.Line > 0 || p.Frame > 0) {
			s := model.Pos{File: "x", Line: p.Line, Col: p.Col, Frame: p.Frame}.String()
			b.WriteString(s[1:])
			continue
		}
		p.Object, p.Path = "", ""
		if p.File == "" && p.Line == 0 && p.Frame == 0 {
			p.Object = e.Pos.Object
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// CheckDetail returns the error WriteTable would return for a
// TableStyle.Detail of detail on r (wrapping ErrNoFinding), or nil when
// detail is "", "all", or selects one finding.
func CheckDetail(r *Report, detail string) error {
	if r == nil {
		return ErrNilReport
	}
	_, err := selectDetail(r, detail)
	return err
}

// selectDetail is the findings TableStyle.Detail selects, by index, or
// nil for none: every finding for "all", else the finding of that
// number (from 1) or whose fingerprint begins with it.
func selectDetail(r *Report, detail string) ([]int, error) {
	switch detail {
	case "":
		return nil, nil
	case "all":
		sel := make([]int, len(r.Findings))
		for i := range sel {
			sel[i] = i
		}
		return sel, nil
	}
	if n, err := strconv.Atoi(detail); err == nil && n >= 1 && n <= len(r.Findings) {
		return []int{n - 1}, nil
	}
	var sel []int
	for i, f := range r.Findings {
		if f.Fingerprint != "" && strings.HasPrefix(f.Fingerprint, detail) {
			sel = append(sel, i)
		}
	}
	switch len(sel) {
	case 1:
		return sel, nil
	case 0:
		return nil, fmt.Errorf("%w: %q is neither a finding's number (1 to %d) nor the start of its fingerprint", ErrNoFinding, detail, len(r.Findings))
	}
	return nil, fmt.Errorf("%w: %q begins %d fingerprints: give more of it", ErrNoFinding, detail, len(sel))
}

// decideShell are the lines of a Decide as the screen prints them: each
// "# " comment line wrapped as a comment, each command on its own line, in
// their order; a one-line Decide's note in parentheses as a comment
// before its command.
func decideShell(indent, decide string) []sline {
	var out []sline
	lines := strings.Split(decide, "\n")
	if len(lines) == 1 && !strings.HasPrefix(decide, "#") {
		command, note := decideParts(decide)
		if note != "" {
			out = append(out, hanging(indent+"# ", indent+"# ", escape.String(note)))
		}
		return append(out, commandLine(indent, escape.String(command)))
	}
	for _, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
		case strings.HasPrefix(l, "#"):
			out = append(out, hanging(indent+"# ", indent+"# ", escape.String(strings.TrimSpace(strings.TrimPrefix(l, "#")))))
		default:
			out = append(out, commandLine(indent, escape.String(l)))
		}
	}
	return out
}
