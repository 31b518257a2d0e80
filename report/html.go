package report

import (
	_ "embed"
	"html/template"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/escape"
	"github.com/netmortem/netmortem/model"
)

// The html format is one self-contained page: inline CSS, no script, and a
// Content-Security-Policy that lets nothing load, so that it opens offline
// and a hostile bundle cannot make it fetch anything. Every string from the
// bundle goes through escape.String (control characters and bidirectional
// overrides shown as Go escapes, as in the table) and then html/template's
// contextual escaping.
//
// The page's structure is a contract for tools that read it:
//
//   - <body data-findings="N">, N the number of findings;
//   - the verdict in <section id="verdict">;
//   - one <section class="finding" id="f-FINGERPRINT"
//     data-fingerprint="FINGERPRINT"> per finding (a finding without a
//     fingerprint, or whose fingerprint an earlier one has, gets
//     id="f-N", N its 1-based index);
//   - inside it, when Report.Timelines has its fingerprint, <figure
//     class="timeline" data-fingerprint="FINGERPRINT"> whose first child
//     is the chart's <svg>;
//   - the evidence appendix in <section id="appendix">, one <li id="q-N"
//     class="quote"> per position cited, which every evidence link
//     (href="#q-N") points at.

//go:embed html.tmpl
var htmlTemplateText string

//go:embed html.css
var htmlCSS string

// htmlTemplate returns the page's template, parsed the first time a page
// is written rather than when the program starts.
var htmlTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Parse(htmlTemplateText))
})

// htmlPage is what the template renders: every string already escaped
// for display (see esc), numbers and links computed.
type htmlPage struct {
	CSS            template.CSS
	Tool           string
	InputsRead     int
	InputsSkipped  int
	WarningCount   int
	Incomplete     []string
	Verdict        []htmlVerdict
	VerdictOthers  string
	Findings       []*htmlFinding
	Warnings       []htmlWarning
	Skipped        []htmlSkipped
	Collect        []htmlCollect
	CollectHeading string
	CollectOthers  int
	Errors         []htmlRuleError
	Suppressed     []htmlSuppressed
	SuppressedNote string
	Inputs         []htmlInput
	Quotes         []*htmlQuote
}

type htmlVerdict struct {
	Sev     string
	Line    string
	Anchor  htmlLink
	Related []htmlLink
}

// htmlLink is a link to a finding: its section's id, the text, and what
// a printed page shows after it ("finding 2").
type htmlLink struct {
	Anchor string
	Text   string
	Ref    string
}

type htmlFinding struct {
	Index        int
	ID           string
	Fingerprint  string
	Sev          string
	Certainty    string
	Rule         string
	Title        string
	Summary      string
	Cause        string
	CauseNote    string
	ExplainedBy  string
	Fix          []htmlSpan
	Decide       string
	DecideNote   string
	Alternatives []string
	Supports     []string
	Contradicts  []string
	Facts        []htmlFact
	Sources      string
	Evidence     []htmlRef
	Timeline     *htmlChart
}

type htmlFact struct{ Key, Value string }

// htmlSpan is a piece of a Fix: prose, or a command (a code span of the
// Fix, shown as code without its backticks).
type htmlSpan struct {
	Text string
	Code bool
}

// htmlSpans splits a finding's Fix into prose and code (splitSpans), the
// names of f and r among its atoms.
func htmlSpans(f analyzer.Finding, r *Report) []htmlSpan {
	var out []htmlSpan
	for _, s := range splitSpans(f.Fix, hostileNames(f, r.names...)) {
		out = append(out, htmlSpan{Text: esc(s.text), Code: s.code})
	}
	return out
}

// htmlRef is a link to an appendix entry.
type htmlRef struct {
	Q    int
	Pos  string
	Note string
}

type htmlWarning struct {
	Q       int
	Pos     string
	Message string
}

// htmlCollect is one command of the "To decide, collect" section: where
// it runs, the findings it decides (links, not the text formats' "[2]",
// which the page uses for its appendix), what to look for, the rules it
// lets run.
type htmlCollect struct {
	Shell, Where string
	Decides      []htmlLink
	Notes        []string
	Unblocks     string
}

type htmlSkipped struct {
	Rule, Missing string
}

type htmlRuleError struct {
	Rule, Err string
}

type htmlSuppressed struct {
	Sev, Rule, Title, Why, Fingerprint string
}

type htmlInput struct {
	Path, Format, Kind, Node, Records, Skipped string
}

// htmlQuote is one entry of the evidence appendix.
type htmlQuote struct {
	N      int
	Pos    string
	Text   string
	Quoted bool
	// Whole is a position naming a file alone (attempts a capture only
	// counted): there is no line or frame to quote.
	Whole bool
	// CitedBy are the findings whose evidence or timeline cite it.
	CitedBy []htmlLink
}

// quoteBook numbers the positions the page cites, in the order cited, and
// finds the quote of each.
type quoteBook struct {
	texts map[model.Pos]string
	// loose are the quotes by file, line and frame alone, for a position
	// that names an object or a column its quote does not.
	loose   map[model.Pos]string
	byPos   map[model.Pos]*htmlQuote
	entries []*htmlQuote
}

func newQuoteBook(quotes []Quote) *quoteBook {
	b := &quoteBook{texts: map[model.Pos]string{}, loose: map[model.Pos]string{}, byPos: map[model.Pos]*htmlQuote{}}
	for _, q := range quotes {
		if _, ok := b.texts[q.Pos]; !ok {
			b.texts[q.Pos] = q.Text
		}
		if _, ok := b.loose[looseKey(q.Pos)]; !ok {
			b.loose[looseKey(q.Pos)] = q.Text
		}
	}
	return b
}

// looseKey is p with only its file, line and frame.
func looseKey(p model.Pos) model.Pos {
	return model.Pos{File: p.File, Line: p.Line, Frame: p.Frame}
}

// text returns the quote of p, and whether there is one: the quote of
// exactly p, else of its file, line and frame.
func (b *quoteBook) text(p model.Pos) (string, bool) {
	if t, ok := b.texts[p]; ok {
		return t, true
	}
	if p.Line > 0 || p.Frame > 0 {
		t, ok := b.loose[looseKey(p)]
		return t, ok
	}
	return "", false
}

// quoted reports whether p has a quote.
func (b *quoteBook) quoted(p model.Pos) bool {
	_, ok := b.text(p)
	return ok && !p.IsZero()
}

// cite returns the number of p's appendix entry, adding it when new, and
// records that the finding at anchor cites it. A zero p has none: 0.
func (b *quoteBook) cite(p model.Pos, by htmlLink) int {
	if p.IsZero() {
		return 0
	}
	q, ok := b.byPos[p]
	if !ok {
		q = &htmlQuote{N: len(b.entries) + 1, Pos: esc(p.String()), Whole: p.Line == 0 && p.Frame == 0 && p.Object == ""}
		text, found := b.text(p)
		q.Text, q.Quoted = escQuote(text), found
		b.byPos[p] = q
		b.entries = append(b.entries, q)
	}
	if n := len(q.CitedBy); by.Anchor != "" && (n == 0 || q.CitedBy[n-1].Anchor != by.Anchor) {
		q.CitedBy = append(q.CitedBy, by)
	}
	return q.N
}

// esc is s as the page shows it: its control characters, bidirectional
// overrides and invalid bytes written as Go escapes (html/template then
// escapes it for HTML).
func esc(s string) string { return escape.String(s) }

// escQuote is esc for a quoted line, which keeps its tabs: the page
// shows the line as it is in the file, and a tab does no harm there.
func escQuote(s string) string {
	parts := strings.Split(s, "\t")
	for i, p := range parts {
		parts[i] = esc(p)
	}
	return strings.Join(parts, "\t")
}

func escAll(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = esc(s)
	}
	return out
}

// writeHTML prints the html format.
func writeHTML(w io.Writer, r *Report) error {
	return htmlTemplate().Execute(w, newHTMLPage(r))
}

// newHTMLPage lays out r for the template.
func newHTMLPage(r *Report) *htmlPage {
	p := &htmlPage{
		CSS:           template.CSS(htmlCSS),
		Tool:          esc(toolLine(r)),
		InputsRead:    countRead(r),
		InputsSkipped: countSkipped(r),
		WarningCount:  len(r.Warnings),
		Incomplete:    escAll(r.Incomplete),
	}
	book := newQuoteBook(r.Quotes)
	anchors := findingAnchors(r.Findings)
	for i, f := range r.Findings {
		p.Findings = append(p.Findings, newHTMLFinding(i, f, anchors[i], r, book))
	}
	// The verdict names a finding by its fingerprint, or by its rule and
	// title when it has none.
	links := map[string]htmlLink{}
	key := func(fingerprint, rule, title string) string {
		if fingerprint != "" {
			return fingerprint
		}
		return "\x00" + rule + "\x00" + title
	}
	for i, f := range r.Findings {
		if k := key(f.Fingerprint, f.Rule, f.Title); links[k].Anchor == "" {
			links[k] = htmlLink{Anchor: anchors[i], Ref: "finding " + strconv.Itoa(i+1)}
		}
	}
	for _, c := range r.Verdict.Causes {
		v := htmlVerdict{Sev: c.Severity.String(), Line: esc(c.Line), Anchor: links[key(c.Fingerprint, c.Rule, c.Title)]}
		for _, l := range c.Related {
			link := links[key(l.Fingerprint, l.Rule, l.Title)]
			link.Text = esc(l.Rule + ": " + l.Title + " (" + l.Link + ")")
			v.Related = append(v.Related, link)
		}
		p.Verdict = append(p.Verdict, v)
	}
	if lines := verdictLines(r.Verdict); r.Verdict.Others > 0 {
		p.VerdictOthers = esc(lines[len(lines)-1])
	}
	for _, wn := range r.Warnings {
		// A warning links to the appendix only when its line is quoted:
		// the appendix is for the evidence, not a list of every warning.
		hw := htmlWarning{Pos: esc(wn.Position), Message: esc(wn.Message)}
		if book.quoted(wn.Pos) {
			hw.Q = book.cite(wn.Pos, htmlLink{})
		}
		p.Warnings = append(p.Warnings, hw)
	}
	for _, s := range r.Skipped {
		p.Skipped = append(p.Skipped, htmlSkipped{Rule: esc(s.Rule), Missing: esc(skippedNeeds(s))})
	}
	shown := collectListed(r)
	for _, e := range shown[:min(len(shown), maxMarkdownCollect)] {
		p.Collect = append(p.Collect, newHTMLCollect(r, e, anchors))
	}
	p.CollectOthers = len(shown) - len(p.Collect)
	p.CollectHeading = collectHeading(shown)
	for _, e := range r.Errors {
		p.Errors = append(p.Errors, htmlRuleError{Rule: esc(e.Rule), Err: esc(e.Err)})
	}
	for _, s := range r.Suppressed {
		p.Suppressed = append(p.Suppressed, htmlSuppressed{Sev: s.Severity.String(), Rule: esc(s.Rule), Title: esc(s.Title),
			Why: esc(why(s)), Fingerprint: esc(s.Fingerprint)})
	}
	p.SuppressedNote = esc(suppressedNote(r))
	for _, in := range r.Inputs {
		hi := htmlInput{Path: esc(in.Path), Format: esc(in.Format), Kind: esc(string(in.Kind)), Node: esc(in.Node), Skipped: esc(in.Skipped)}
		if in.Skipped == "" {
			hi.Records = strconv.Itoa(in.Records)
		}
		p.Inputs = append(p.Inputs, hi)
	}
	p.Quotes = book.entries
	return p
}

// toolLine names the netmortem that wrote r: "netmortem v1.2.3 (0123456,
// go1.26.8)".
func toolLine(r *Report) string {
	s := strings.TrimSpace(r.Tool.Name + " " + r.Tool.Version)
	var extra []string
	if c := r.Tool.Commit; c != "" {
		extra = append(extra, c[:min(len(c), 12)])
	}
	if r.Tool.Go != "" {
		extra = append(extra, r.Tool.Go)
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

// skippedNeeds says what a skipped rule lacked: "netfilter, ipvs", or
// "one of capture, conntrack".
func skippedNeeds(s analyzer.Skipped) string {
	var parts []string
	for _, k := range s.Missing {
		parts = append(parts, string(k))
	}
	if len(s.AnyOf) > 0 {
		var oneOf []string
		for _, k := range s.AnyOf {
			oneOf = append(oneOf, string(k))
		}
		parts = append(parts, "one of "+strings.Join(oneOf, ", "))
	}
	return strings.Join(parts, "; ")
}

// findingAnchors are the ids of the findings' sections: "f-" and the
// fingerprint, or "f-N" (N the 1-based index) for a finding without one
// or whose fingerprint an earlier finding has.
func findingAnchors(findings []analyzer.Finding) []string {
	out := make([]string, len(findings))
	seen := map[string]bool{}
	for i, f := range findings {
		id := "f-" + f.Fingerprint
		if f.Fingerprint == "" || seen[id] {
			id = "f-" + strconv.Itoa(i+1)
		}
		seen[id] = true
		out[i] = id
	}
	return out
}

func newHTMLFinding(i int, f analyzer.Finding, anchor string, r *Report, book *quoteBook) *htmlFinding {
	hf := &htmlFinding{
		Index: i + 1, ID: anchor, Fingerprint: esc(f.Fingerprint), Sev: f.Severity.String(),
		Certainty: string(f.Certainty), Rule: esc(f.Rule), Title: esc(f.Title), Summary: esc(f.Summary),
		Cause: esc(f.Cause), CauseNote: certaintyNote(f.Certainty), ExplainedBy: esc(f.ExplainedBy),
		Fix: htmlSpans(f, r), Decide: esc(f.Decide), Alternatives: escAll(f.Alternatives),
		Supports: escAll(f.Supports), Contradicts: escAll(f.Contradicts), Sources: esc(sourcesText(f)),
	}
	decide, note := decideParts(f.Decide)
	hf.Decide, hf.DecideNote = esc(oneLine(decide)), esc(note)
	for _, l := range factLines(f.Facts) {
		k, v, _ := strings.Cut(l, ": ")
		hf.Facts = append(hf.Facts, htmlFact{Key: esc(k), Value: esc(v)})
	}
	by := htmlLink{Anchor: anchor, Text: esc(f.Rule)}
	for _, e := range f.Evidence {
		hf.Evidence = append(hf.Evidence, htmlRef{Q: book.cite(e.Pos, by), Pos: esc(e.Pos.String()), Note: esc(e.Note)})
	}
	if tl := r.Timelines[f.Fingerprint]; tl != nil && f.Fingerprint != "" {
		hf.Timeline = newHTMLChart(tl, i+1, func(p model.Pos) int { return book.cite(p, by) })
		hf.Timeline.Fingerprint = hf.Fingerprint
	}
	return hf
}

// newHTMLCollect lays out one command of "To decide, collect", as
// nextEvidenceWhy says it in the text formats, the findings it decides
// linked to their sections; anchors are the findings' section ids.
func newHTMLCollect(r *Report, e NextEvidence, anchors []string) htmlCollect {
	where := collectedNotes(e.Collected)
	if w := nextEvidenceWhere(e); w != "" {
		where = append([]string{w}, where...)
	}
	c := htmlCollect{Shell: esc(e.Shell), Where: esc(strings.Join(where, "; ")), Notes: escAll(e.Notes)}
	for _, fp := range e.Decides {
		link := htmlLink{Text: esc(fp)}
		for i, f := range r.Findings {
			if f.Fingerprint == fp {
				link = htmlLink{Anchor: anchors[i], Text: esc("finding " + strconv.Itoa(i+1) + " (" + f.Rule + ")"), Ref: "finding " + strconv.Itoa(i+1)}
				break
			}
		}
		c.Decides = append(c.Decides, link)
	}
	if len(e.Unblocks) > 0 {
		c.Unblocks = esc(strings.Join(e.Unblocks, ", "))
	}
	return c
}
