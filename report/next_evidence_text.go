package report

import (
	"fmt"
	"strings"

	"github.com/netmortem/netmortem/collect"
)

// collectHeading names the section listing shown: "To decide, collect"
// when the commands decide findings, "To let the skipped rules run,
// collect" when they only let rules run, both when both.
func collectHeading(shown []NextEvidence) string {
	decides, unblocks := false, false
	for _, e := range shown {
		decides = decides || len(e.Decides) > 0
		unblocks = unblocks || len(e.Unblocks) > 0
	}
	switch {
	case decides && unblocks:
		return "To decide, or to let the skipped rules run, collect"
	case decides:
		return "To decide, collect"
	}
	return "To let the skipped rules run, collect"
}

// nextEvidenceWhy says where a command is needed and what it would decide:
// "on node1; decides [3] syn-unanswered; lets timewait-churn run".
func nextEvidenceWhy(r *Report, e NextEvidence) string {
	var parts []string
	if w := nextEvidenceWhere(e); w != "" {
		parts = append(parts, w)
	}
	parts = append(parts, collectedNotes(e.Collected)...)
	if len(e.Decides) > 0 {
		var fs []string
		for _, fp := range e.Decides {
			fs = append(fs, findingRef(r, fp))
		}
		parts = append(parts, "decides "+fewOf(fs))
	}
	for _, n := range e.Notes {
		parts = append(parts, "look for: "+n)
	}
	if len(e.Unblocks) > 0 {
		parts = append(parts, "lets "+fewOf(e.Unblocks)+" run")
	}
	return strings.Join(parts, "; ")
}

// fewOf joins names with commas, or, past four, the first three and how
// many more: "a, b, c and 8 more" (the JSON lists them all).
func fewOf(names []string) string {
	if len(names) <= 4 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}

// nextEvidenceWhere says where a command is to run: "once, with
// kubectl", "on node1, node2", "on the nodes" when the bundle does not
// say which; "" when the collector has it from every node it was wanted
// from already (collectedNotes says how).
func nextEvidenceWhere(e NextEvidence) string {
	switch {
	case e.Scope == collect.ScopeCluster:
		return "once, with kubectl"
	case len(e.Nodes) > 0:
		return "on " + strings.Join(e.Nodes, ", ")
	case len(e.Collected) == 0:
		return "on the nodes"
	}
	return ""
}

// collectedNotes says what the collector did with a command, the nodes
// with the same outcome together: "collected on node1, node2: empty",
// "collected on node3: read", "not collected on node4: ip_vs not loaded",
// "failed on node5 (exit status 1)".
func collectedNotes(cs []Collected) []string {
	var keys []string
	nodes := map[string][]string{}
	for _, c := range cs {
		var key string
		switch c.Outcome {
		case CollectedEmpty:
			key = "collected on %s: empty"
		case CollectedRead:
			key = "collected on %s: read"
		case CollectedSkipped:
			key = "not collected on %s: " + strings.ReplaceAll(c.Why, "%", "%%")
		case CollectedFailed:
			key = fmt.Sprintf("failed on %%s (exit status %d)", c.Status)
		default:
			continue
		}
		if _, ok := nodes[key]; !ok {
			keys = append(keys, key)
		}
		nodes[key] = append(nodes[key], c.Node)
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, fmt.Sprintf(k, strings.Join(nodes[k], ", ")))
	}
	return out
}

// findingRef names the finding with fingerprint fp: "[3] syn-unanswered",
// or the fingerprint when it is not among r's findings.
func findingRef(r *Report, fp string) string {
	for i, f := range r.Findings {
		if f.Fingerprint == fp {
			return fmt.Sprintf("[%d] %s", i+1, f.Rule)
		}
	}
	return fp
}

// maxMarkdownCollect is how many commands the markdown and HTML formats'
// collect lists show.
const maxMarkdownCollect = 5

// collectListed are the commands the markdown and HTML formats list to
// collect: those that would change the answer (collectAsked), but those
// the findings give to decide them, printed with each finding.
func collectListed(r *Report) []NextEvidence {
	printed := map[string]bool{}
	for _, f := range r.Findings {
		printed[decideCommand(f)] = true
	}
	return collectAsked(r, printed)
}

// writeNextEvidenceMarkdown writes the markdown format's "To decide,
// collect" section (collectListed).
func writeNextEvidenceMarkdown(ew *errWriter, r *Report) {
	shown := collectListed(r)
	if len(shown) == 0 {
		return
	}
	ew.printf("\n### %s\n\n", collectTitle(shown, maxMarkdownCollect))
	for i, e := range shown {
		if i == maxMarkdownCollect {
			break
		}
		ew.printf("- %s: %s\n", mdCode(e.Shell), mdCell(mdProse(nextEvidenceWhy(r, e), nil)))
	}
}

// decideParts splits a finding's Decide into its command lines and its
// note. A Decide is shell: command lines, each alone on its line, and
// "# " comment lines that say what to look for; the note is the
// comments' text joined, the command the other lines ("# on the node\nss
// -lntup" is "ss -lntup", "on the node"). A one-line Decide without
// comments may end in a note in parentheses ("ss -lntup (the listener on
// port 8080)"), as older reports wrote it.
func decideParts(decide string) (command, note string) {
	if !strings.Contains(decide, "\n") && !strings.HasPrefix(decide, "#") {
		return decideNoteParts(decide)
	}
	var commands, notes []string
	for _, l := range strings.Split(decide, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
		case strings.HasPrefix(l, "#"):
			notes = append(notes, strings.TrimSpace(strings.TrimPrefix(l, "#")))
		default:
			commands = append(commands, l)
		}
	}
	return strings.Join(commands, "\n"), strings.Join(notes, "; ")
}

// decideNoteParts splits a one-line Decide into the command line and the
// note in parentheses that ends it, if any: the note opens at the first
// " (" outside the command's single quotes (a quoted pattern's
// parentheses stay in the command) and closes at the end; the note,
// prose, may hold apostrophes.
func decideNoteParts(decide string) (command, note string) {
	quoted, depth := false, 0
	for i := 0; i < len(decide); i++ {
		switch c := decide[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '\\':
			i++
		case c == '(' && depth == 0 && i > 0 && decide[i-1] == ' ' && closesAtEnd(decide[i:]):
			return strings.TrimSpace(decide[:i]), decide[i+1 : len(decide)-1]
		case c == '(':
			depth++
		case c == ')':
			depth--
		}
	}
	return decide, ""
}

// closesAtEnd reports whether the parenthesis that opens s closes at its
// last byte.
func closesAtEnd(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i == len(s)-1
			}
		}
	}
	return false
}

// decideLine is a finding's Decide as the text formats print it: the
// command line, then its note as a shell comment, so that the line works
// when pasted.
func decideLine(decide string) string {
	command, note := decideParts(decide)
	command = oneLine(command)
	if note == "" {
		return command
	}
	return command + "  # " + note
}

// decideMarkdown is a finding's Decide in Markdown: the command line as
// code, its note after it.
func decideMarkdown(decide string) string {
	command, note := decideParts(decide)
	command = oneLine(command)
	if note == "" {
		return mdCode(command)
	}
	return mdCode(command) + " (" + mdProse(note, nil) + ")"
}

// oneLine joins a Decide's command lines into one command line: "a\nb"
// is "a; b".
func oneLine(command string) string {
	return strings.ReplaceAll(command, "\n", "; ")
}
