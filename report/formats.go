package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/internal/lazyre"
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
var base60 = lazyre.New(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)

// breaksLine reports the control characters that the double-quoted style
// gives to a string holding them, whose escapes keep them on one line: the
// exact text, without a block scalar whose lines could pass for lines of
// the output.
func breaksLine(r rune) bool {
	return r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029
}

func writeTable(w io.Writer, r *Report) error {
	return WriteTable(w, r, TableStyle{})
}

// Bounds of the markdown format: a report goes into a ticket or a
// review comment (GitHub takes 65,536 characters, Jira 32,767).
const (
	// MaxMarkdown is the most bytes (so characters) the markdown format
	// writes: past it, the findings left out are counted and the JSON
	// report named for them.
	MaxMarkdown = 60000
	// maxMarkdownRows is how many findings the summary table lists,
	// maxMarkdownEvidence how many pieces of evidence a finding lists,
	// maxMarkdownList how many input warnings, suppressed findings or
	// reasons for incompleteness are listed.
	maxMarkdownRows     = 50
	maxMarkdownEvidence = 10
	maxMarkdownList     = 20
)

func writeMarkdown(w io.Writer, r *Report) error {
	var head, tail bytes.Buffer
	ew := &errWriter{w: &head}
	ew.printf("## netmortem findings\n\n")
	if len(r.Incomplete) > 0 {
		ew.printf("**The analysis is incomplete**: the findings cover only what was read and analyzed.\n\n")
		for i, why := range r.Incomplete {
			if i == maxMarkdownList {
				ew.printf("- and %d more (`incomplete` in `-o json`)\n", len(r.Incomplete)-i)
				break
			}
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
		ew.printf("| Severity | Certainty | Rule | Finding |\n|---|---|---|---|\n")
		for i, f := range r.Findings {
			if i == maxMarkdownRows {
				ew.printf("\n_And %d more findings, below._\n", len(r.Findings)-i)
				break
			}
			ew.printf("| %s | %s | `%s` | %s |\n", f.Severity, orDash(string(f.Certainty)), f.Rule, mdCell(mdProse(f.Title, mdAtoms(f, r.names...))))
		}
	}
	ew = &errWriter{w: &tail}
	writeNextEvidenceMarkdown(ew, r)
	if len(r.Warnings) > 0 {
		ew.printf("\n### Input warnings\n\n")
		for i, wn := range r.Warnings {
			if i == maxMarkdownList {
				ew.printf("- and %d more (`warnings` in `-o json`)\n", len(r.Warnings)-i)
				break
			}
			ew.printf("- %s: %s\n", mdCode(wn.Position), mdProse(wn.Message, nil))
		}
	}
	writeSuppressedMarkdown(ew, r)

	out := &errWriter{w: w}
	out.raw(head.String())
	size := head.Len() + tail.Len()
	for i, f := range r.Findings {
		var b bytes.Buffer
		writeMarkdownFinding(&errWriter{w: &b}, r, f)
		// Room is kept for the note on what is left out.
		if size+b.Len() > MaxMarkdown-400 {
			out.printf("\n_%d more %s left out to keep this report under %d characters: `netmortem analyze -o json` has every one, "+
				"and `netmortem analyze --detail` prints them._\n", len(r.Findings)-i, plural(len(r.Findings)-i, "finding", "findings"), MaxMarkdown)
			break
		}
		size += b.Len()
		out.raw(b.String())
	}
	out.raw(tail.String())
	return out.err
}

// writeMarkdownFinding writes the section of one finding: at most
// maxMarkdownEvidence pieces of evidence and, in its facts, lists of at
// most maxFactItems items, each with its total.
func writeMarkdownFinding(ew *errWriter, r *Report, f analyzer.Finding) {
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
		label := "Evidence"
		if f.Certainty == analyzer.Proven {
			label = "Proof"
		}
		if len(f.Evidence) > maxMarkdownEvidence {
			ew.printf("**%s** (%d of %d pieces; all of them in `-o json`)**.**\n\n", label, maxMarkdownEvidence, len(f.Evidence))
		} else {
			ew.printf("**%s.**\n\n", label)
		}
		for i, e := range f.Evidence {
			if i == maxMarkdownEvidence {
				break
			}
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
		keys := make([]string, 0, len(f.Facts))
		for k := range f.Facts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ew.printf("- %s: %s\n", k, mdCode(factValueCapped(f.Facts[k], maxFactItems)))
		}
		ew.printf("\n</details>\n")
	}
	ew.printf("\n_Rule `%s`, from %s._\n", f.Rule, sourcesText(f))
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
	if s == "" {
		// An empty code span is no span: CommonMark shows its backticks.
		return "_(empty)_"
	}
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

// countRead counts the inputs of r that were read: neither skipped nor a
// capture whose header could not be read.
func countRead(r *Report) int {
	return max(0, len(r.Inputs)-countSkipped(r)-r.unreadable)
}

// countSkipped counts the inputs of r that were skipped.
func countSkipped(r *Report) int {
	n := 0
	for _, in := range r.Inputs {
		if in.Skipped != "" {
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

// raw writes s, already escaped, as it is.
func (e *errWriter) raw(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
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
