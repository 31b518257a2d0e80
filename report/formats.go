package report

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/escape"
)

func writeJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

func writeYAML(w io.Writer, r *Report) error {
	// Go through JSON so YAML shows the same field names, values and order
	// as JSON (addresses as strings, severities as words): the JSON is
	// decoded into a yaml.Node, which keeps the keys in their order, and
	// given the block style.
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("yaml: %w", err)
	}
	blockStyle(&doc)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	return enc.Close()
}

// blockStyle gives n and its children YAML's block style in place of the
// flow style and quotes they had as JSON. A string is quoted when it would
// read as another type ("true", "1", "no", "1:20"), as yaml.v3 quotes a Go
// string, and double-quoted when it holds a control character.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	// The encoder quotes a string that would read as another type in YAML
	// 1.2 ("true", "1"); those YAML 1.1 readers take for booleans and
	// numbers are quoted here, as yaml.v3 quotes them in Go strings.
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" &&
		(strings.ContainsFunc(n.Value, breaksLine) || yaml11Bools[n.Value] || base60.MatchString(n.Value)) {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// yaml11Bools are the words YAML 1.1 reads as booleans, beyond those of
// YAML 1.2.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true, "off": true, "Off": true, "OFF": true,
}

// base60 matches the sexagesimal numbers of YAML 1.1 ("1:20").
var base60 = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)

// breaksLine reports the control characters that the double-quoted style
// gives to a string holding them, whose escapes keep them on one line: the
// exact text, without a block scalar whose lines could pass for lines of
// the output.
func breaksLine(r rune) bool {
	return r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029
}

// maxTableEvidence bounds the evidence shown in the summary table's cell.
const maxTableEvidence = 4

func writeTable(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	if len(r.Findings) == 0 {
		writeNoFindings(ew, r)
		return ew.err
	}
	if len(r.Incomplete) > 0 {
		ew.printf("Incomplete: the findings cover only what could be read (%d %s listed at the end).\n\n",
			len(r.Incomplete), plural(len(r.Incomplete), "reason", "reasons"))
	}
	writeVerdict(ew, r.Verdict, "table")
	if ew.err != nil {
		return ew.err
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowConfig(tw.CellConfig{
			Formatting:   tw.CellFormatting{AutoWrap: tw.WrapNormal},
			Alignment:    tw.CellAlignment{Global: tw.AlignLeft},
			Padding:      tw.CellPadding{Global: tw.PaddingDefault},
			ColMaxWidths: tw.CellWidth{PerColumn: tw.NewMapper[int, int]().Set(2, 60)},
		}),
	)
	t.Header("SEVERITY", "RULE", "FINDING", "EVIDENCE")
	for _, f := range r.Findings {
		var ev []string
		for i, e := range f.Evidence {
			if i == maxTableEvidence {
				ev = append(ev, fmt.Sprintf("(+%d more)", len(f.Evidence)-i))
				break
			}
			ev = append(ev, escape.String(e.Pos.String()))
		}
		// Each cell is escaped on its own: the evidence cell's newlines
		// are the table's, one position per line.
		if err := t.Append(strings.ToUpper(f.Severity.String())+certaintyCell(f.Certainty), escape.String(f.Rule), escape.String(f.Title),
			strings.Join(ev, "\n")); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	writeDetails(ew, r)
	return ew.err
}

// writeDetails writes what follows the findings table: each finding in
// full, why the analysis is incomplete, and the suppressed findings.
func writeDetails(ew *errWriter, r *Report) {
	for i, f := range r.Findings {
		ew.printf("\n[%d] %s%s %s: %s\n", i+1, strings.ToUpper(f.Severity.String()), certaintyTag(f.Certainty), f.Rule, f.Title)
		ew.printf("    %s\n", f.Summary)
		if f.Cause != "" {
			ew.printf("    Cause: %s%s\n", f.Cause, certaintyNote(f.Certainty))
		}
		for _, l := range causalLines(f, plain, decideLine) {
			ew.printf("    %s\n", l)
		}
		for _, l := range candidateLines(f, plain, plain, decideLine) {
			ew.printf("    %s\n", l)
		}
		if f.Fix != "" {
			ew.printf("    Fix:   %s\n", f.Fix)
		}
		if len(f.Facts) > 0 {
			ew.printf("    Facts:\n")
			for _, l := range factLines(f.Facts) {
				ew.printf("      %s\n", l)
			}
		}
		if len(f.Evidence) > 0 {
			ew.printf("    Evidence:\n")
			for _, e := range f.Evidence {
				ew.printf("      %s\n", e)
			}
		}
	}
	writeNextEvidence(ew, r)
	if len(r.Incomplete) > 0 {
		ew.printf("\nThe analysis is incomplete: the findings cover only what was read and analyzed:\n")
		writeIncomplete(ew, r)
	}
	writeSuppressedTable(ew, r)
}

// writeNoFindings is the table format of a report without findings.
func writeNoFindings(ew *errWriter, r *Report) {
	if len(r.Incomplete) > 0 {
		ew.printf("No findings in what could be read (%d %s read, %d %s), but the analysis is incomplete:\n",
			countRead(r), plural(countRead(r), "input", "inputs"), len(r.Warnings), plural(len(r.Warnings), "warning", "warnings"))
		writeIncomplete(ew, r)
	} else {
		ew.printf("No findings (%d %s read, %d %s).\n", countRead(r), plural(countRead(r), "input", "inputs"),
			len(r.Warnings), plural(len(r.Warnings), "warning", "warnings"))
	}
	writeNextEvidence(ew, r)
	writeSuppressedTable(ew, r)
}

// writeIncomplete lists why the analysis is incomplete, one reason a line.
func writeIncomplete(ew *errWriter, r *Report) {
	for _, why := range r.Incomplete {
		ew.printf("  - %s\n", why)
	}
}

func writeMarkdown(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	ew.printf("## netmortem findings\n\n")
	if len(r.Incomplete) > 0 {
		ew.printf("**The analysis is incomplete**: the findings cover only what was read and analyzed.\n\n")
		for _, why := range r.Incomplete {
			ew.printf("- %s\n", mdCell(mdProse(why, nil)))
		}
		ew.printf("\n")
	}
	switch {
	case len(r.Findings) == 0 && len(r.Incomplete) > 0:
		ew.printf("No findings in what could be read: %d %s read, %d %s.\n", countRead(r), plural(countRead(r), "input", "inputs"),
			len(r.Warnings), plural(len(r.Warnings), "warning", "warnings"))
	case len(r.Findings) == 0:
		ew.printf("No findings: %d %s read, %d %s.\n", countRead(r), plural(countRead(r), "input", "inputs"),
			len(r.Warnings), plural(len(r.Warnings), "warning", "warnings"))
	default:
		writeVerdict(ew, r.Verdict, "markdown")
		ew.printf("| Severity | Cause | Rule | Finding |\n|---|---|---|---|\n")
		for _, f := range r.Findings {
			ew.printf("| %s | %s | `%s` | %s |\n", f.Severity, orDash(string(f.Certainty)), f.Rule, mdCell(mdProse(f.Title, mdAtoms(f, r.names...))))
		}
	}
	for _, f := range r.Findings {
		atoms := mdAtoms(f, r.names...)
		md := func(s string) string { return mdProse(s, atoms) }
		ew.printf("\n### %s: %s\n\n", strings.ToUpper(f.Severity.String()[:1])+f.Severity.String()[1:], md(f.Title))
		ew.printf("**What happened.** %s\n\n", md(f.Summary))
		if f.Cause != "" {
			ew.printf("**Why.** %s%s\n\n", md(f.Cause), certaintyNote(f.Certainty))
		}
		for _, l := range causalLines(f, md, decideMarkdown) {
			ew.printf("%s\n\n", l)
		}
		for _, l := range candidateLines(f, md, mdCode, decideMarkdown) {
			ew.printf("%s\n\n", l)
		}
		if f.Fix != "" {
			ew.printf("**Fix.** %s\n\n", md(f.Fix))
		}
		if len(f.Evidence) > 0 {
			if f.Certainty == analyzer.Proven {
				ew.printf("**Proof.**\n\n")
			} else {
				ew.printf("**Evidence.**\n\n")
			}
			for _, e := range f.Evidence {
				if e.Note != "" {
					ew.printf("- %s: %s\n", mdCode(e.Pos.String()), md(e.Note))
				} else {
					ew.printf("- %s\n", mdCode(e.Pos.String()))
				}
			}
			ew.printf("\n")
		}
		if len(f.Facts) > 0 {
			ew.printf("<details><summary>Facts</summary>\n\n")
			for _, l := range factLines(f.Facts) {
				k, v, _ := strings.Cut(l, ": ")
				ew.printf("- %s: %s\n", k, mdCode(v))
			}
			ew.printf("\n</details>\n")
		}
		ew.printf("\n_Rule `%s`, from %s._\n", f.Rule, sourcesText(f))
	}
	writeNextEvidenceMarkdown(ew, r)
	if len(r.Warnings) > 0 {
		ew.printf("\n### Input warnings\n\n")
		for _, wn := range r.Warnings {
			ew.printf("- %s: %s\n", mdCode(wn.Position), mdProse(wn.Message, nil))
		}
	}
	writeSuppressedMarkdown(ew, r)
	return ew.err
}

func sourcesText(f analyzer.Finding) string {
	if len(f.Sources) == 0 {
		return "no recorded source"
	}
	parts := make([]string, len(f.Sources))
	for i, s := range f.Sources {
		parts[i] = string(s)
	}
	return strings.Join(dedup(parts), " + ") + " evidence"
}

func dedup(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// mdCell makes s one cell of a Markdown table: its pipes escaped (the
// newlines and other control characters are escaped by the writer).
func mdCell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

// mdCode makes s a Markdown code span whose backtick fence is longer than
// any run of backticks in s, so that s cannot close it and go on as
// Markdown (CommonMark 6.1).
func mdCode(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	if longest == 0 {
		return "`" + s + "`"
	}
	fence := strings.Repeat("`", longest+1)
	return fence + " " + s + " " + fence
}

func countRead(r *Report) int {
	n := 0
	for _, in := range r.Inputs {
		if in.Skipped == "" {
			n++
		}
	}
	return n
}

// errWriter keeps the first write error, so formatting code stays linear.
// Its arguments are escaped (see package escape): names, messages and
// facts come from the bundle, and no input may add a line to the output
// or write a control character to the terminal.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = escape.Fprintf(e.w, format, args...)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// plain is the identity: text as the text formats print it.
func plain(s string) string { return s }
