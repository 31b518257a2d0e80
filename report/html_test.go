package report_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/report"
)

// t0 is the start of the synthetic timelines.
var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

// timelineReport is fixedReport with a timeline for its first finding
// (connection attempts on two servers, an ARP owner flapping, a probe
// window, a mark) and quotes for some of its positions.
func timelineReport() *report.Report {
	r := fixedReport()
	capture := "bundle/node1/capture.pcap"
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	r.Timelines = map[string]*report.Timeline{
		r.Findings[0].Fingerprint: {
			Title: "Connection attempts to 10.0.0.5:31380 by outcome",
			Start: t0, End: at(30000),
			Lanes: []report.Lane{
				{Name: "10.244.1.7:8080", Events: []report.Event{
					{Time: at(1200), Kind: report.EventEstablished, Label: "handshake completed", Pos: model.Pos{File: capture, Frame: 801}},
					{Time: at(4100), Kind: report.EventReset, Label: "SYN/ACK answered by client RST", Pos: model.Pos{File: capture, Frame: 815}},
					{Time: at(9000), Kind: report.EventFailed, Label: "SYN unanswered", Count: 3},
					{Time: at(12000), Kind: report.EventICMP, Label: "ICMP port-unreachable from 10.0.0.1"},
				}},
				{Name: "VIP 10.0.0.100", Spans: []report.Span{
					{Start: at(0), End: at(14000), Kind: report.SpanOwner, Label: "aa:bb:cc:00:00:01", Pos: model.Pos{File: capture, Frame: 2}},
					{Start: at(14000), End: at(30000), Kind: report.SpanOwner, Label: "aa:bb:cc:00:00:02", Pos: model.Pos{File: capture, Frame: 900}},
				}, Events: []report.Event{
					{Time: at(14000), Kind: report.EventARP, Label: "ARP reply: 10.0.0.100 is at aa:bb:cc:00:00:02", Pos: model.Pos{File: capture, Frame: 900}},
				}},
				{Name: "container web (pod shop/web-0)", Events: []report.Event{
					{Time: at(20000), Kind: report.EventRestart, Label: "restart 3 (exit 137)", Pos: model.Pos{File: "bundle/pods.json", Line: 40}},
					{Time: at(21000), Kind: report.EventError, Label: "liveness probe failed"},
					{Time: at(22000), Kind: "novel-kind", Label: "a kind the chart does not know"},
				}},
			},
			Spans: []report.Span{{Start: at(15000), End: at(25000), Kind: report.SpanWindow, Label: "liveness probe window (3 × 10 s)"}},
			Marks: []report.Mark{{Time: at(4000), Label: "first stale DNAT", Pos: model.Pos{File: "bundle/node1/sysctl.txt", Line: 241, Col: 1}}},
		},
	}
	r.Quotes = []report.Quote{
		{Pos: model.Pos{File: capture, Frame: 812}, Text: "10.0.0.5.31380 > 10.244.1.7.8080: Flags [S], seq 1"},
		{Pos: model.Pos{File: capture, Frame: 815}, Text: "10.0.0.5.31380 > 10.244.1.7.8080: Flags [R], seq 2"},
		{Pos: model.Pos{File: "bundle/node1/sysctl.txt", Line: 241}, Text: "net.ipv4.ip_local_port_range = 30000\t32767"},
		{Pos: model.Pos{File: "bundle/node1/sysctl.txt", Line: 14}, Text: "net.ipv4.tcp_fin_timeout"},
	}
	return r
}

func TestHTMLTimelineGolden(t *testing.T) {
	var a, b bytes.Buffer
	if err := report.Write(&a, "html", timelineReport()); err != nil {
		t.Fatal(err)
	}
	if err := report.Write(&b, "html", timelineReport()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two renderings of the same report differ")
	}
	testutil.Golden(t, filepath.Join("testdata", "golden-html-timeline.txt"), a.Bytes())
}

// parseHTML renders r as HTML and parses it as a browser would.
func parseHTML(t *testing.T, r *report.Report) (*html.Node, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := report.Write(&buf, "html", r); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return doc, buf.String()
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val, true
		}
	}
	return "", false
}

func hasClass(n *html.Node, class string) bool {
	v, _ := attr(n, "class")
	return slices.Contains(strings.Fields(v), class)
}

// walk calls f on n and every node under it.
func walk(n *html.Node, f func(*html.Node)) {
	f(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func elements(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	walk(n, func(c *html.Node) {
		if c.Type == html.ElementNode && match(c) {
			out = append(out, c)
		}
	})
	return out
}

func textOf(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	})
	return b.String()
}

// checkSelfContained checks that the page loads nothing: no reference but
// a fragment of the page itself, no script, a Content-Security-Policy that
// lets nothing load, and that every fragment names an element of the
// page.
func checkSelfContained(t *testing.T, doc *html.Node) {
	t.Helper()
	ids := map[string]int{}
	walk(doc, func(n *html.Node) {
		if id, ok := attr(n, "id"); ok && n.Type == html.ElementNode {
			ids[id]++
		}
	})
	for id, n := range ids {
		if n > 1 {
			t.Errorf("id %q used %d times", id, n)
		}
	}
	csp := false
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.Data {
		case "script", "iframe", "object", "embed", "link", "img", "base", "form":
			t.Errorf("a <%s> element", n.Data)
		case "meta":
			if v, _ := attr(n, "http-equiv"); strings.EqualFold(v, "Content-Security-Policy") {
				c, _ := attr(n, "content")
				csp = strings.Contains(c, "default-src 'none'")
			}
		}
		for _, a := range n.Attr {
			switch strings.ToLower(a.Key) {
			case "src", "srcset", "href", "xlink:href", "action", "formaction", "poster", "background":
				if !strings.HasPrefix(a.Val, "#") {
					t.Errorf("<%s %s=%q> points outside the page", n.Data, a.Key, a.Val)
				} else if ids[a.Val[1:]] == 0 {
					t.Errorf("<%s %s=%q>: no element has id %q", n.Data, a.Key, a.Val, a.Val[1:])
				}
			case "style":
				t.Errorf("<%s style=%q>: no inline style attributes", n.Data, a.Val)
			}
			if strings.HasPrefix(strings.ToLower(a.Key), "on") {
				t.Errorf("<%s %s>: an event handler", n.Data, a.Key)
			}
		}
	})
	if !csp {
		t.Error("no Content-Security-Policy with default-src 'none'")
	}
}

func TestHTMLStructure(t *testing.T) {
	r := timelineReport()
	doc, out := parseHTML(t, r)
	checkSelfContained(t, doc)
	body := elements(doc, func(n *html.Node) bool { return n.Data == "body" })
	if n, _ := attr(body[0], "data-findings"); n != fmt.Sprint(len(r.Findings)) {
		t.Errorf("body data-findings=%q, want %d", n, len(r.Findings))
	}
	if v := elements(doc, func(n *html.Node) bool { id, _ := attr(n, "id"); return n.Data == "section" && id == "verdict" }); len(v) != 1 ||
		!strings.Contains(textOf(v[0]), "kubelet probes reset") {
		t.Errorf("verdict section: %d, or it lacks the lead finding", len(v))
	} else {
		// The cause links to the finding stating it (found by rule and
		// title, as it has no fingerprint), the related one to its own.
		var hrefs []string
		for _, a := range elements(v[0], func(n *html.Node) bool { return n.Data == "a" }) {
			h, _ := attr(a, "href")
			hrefs = append(hrefs, h)
		}
		if want := []string{"#f-2", "#f-" + r.Findings[0].Fingerprint}; !slices.Equal(hrefs, want) {
			t.Errorf("verdict links %q, want %q", hrefs, want)
		}
	}
	sections := elements(doc, func(n *html.Node) bool { return n.Data == "section" && hasClass(n, "finding") })
	if len(sections) != len(r.Findings) {
		t.Fatalf("%d finding sections, want %d", len(sections), len(r.Findings))
	}
	for i, s := range sections {
		f := r.Findings[i]
		id, _ := attr(s, "id")
		fp, _ := attr(s, "data-fingerprint")
		want := "f-" + f.Fingerprint
		if f.Fingerprint == "" {
			want = fmt.Sprintf("f-%d", i+1)
		}
		if id != want || fp != f.Fingerprint {
			t.Errorf("finding %d: id %q data-fingerprint %q, want %q and %q", i, id, fp, want, f.Fingerprint)
		}
		text := textOf(s)
		for _, want := range []string{f.Title, f.Summary, f.Rule} {
			if !strings.Contains(text, want) {
				t.Errorf("finding %d lacks %q", i, want)
			}
		}
		figs := elements(s, func(n *html.Node) bool { return n.Data == "figure" && hasClass(n, "timeline") })
		if _, has := r.Timelines[f.Fingerprint]; has != (len(figs) == 1) {
			t.Errorf("finding %d: %d timeline figures, has a timeline: %v", i, len(figs), has)
		}
		for _, fig := range figs {
			if fp, _ := attr(fig, "data-fingerprint"); fp != f.Fingerprint {
				t.Errorf("figure data-fingerprint %q", fp)
			}
			if c := firstElement(fig); c == nil || c.Data != "svg" {
				t.Errorf("the figure's first element is not its svg")
			} else if vb, _ := attr(c, "viewBox"); vb == "" {
				t.Errorf("svg without a viewBox")
			}
		}
		// Every evidence position links to its quote.
		links := elements(s, func(n *html.Node) bool {
			h, _ := attr(n, "href")
			return n.Data == "a" && strings.HasPrefix(h, "#q-") && n.Parent.Data == "li"
		})
		if len(links) != len(f.Evidence) {
			t.Errorf("finding %d: %d evidence links for %d positions", i, len(links), len(f.Evidence))
		}
	}
	quotes := elements(doc, func(n *html.Node) bool { return n.Data == "li" && hasClass(n, "quote") })
	appendix := elements(doc, func(n *html.Node) bool { id, _ := attr(n, "id"); return id == "appendix" })
	if len(appendix) != 1 || len(quotes) == 0 {
		t.Fatalf("appendix %d, quotes %d", len(appendix), len(quotes))
	}
	byID := map[string]string{}
	for _, q := range quotes {
		id, _ := attr(q, "id")
		byID[id] = textOf(q)
	}
	// The quoted frame, a line quoted without its column, a position
	// without a quote.
	for id, want := range map[string]string{
		"q-1": "Flags [S], seq 1", "q-3": "net.ipv4.ip_local_port_range = 30000\t32767", "q-4": "No quote of this position was recorded",
	} {
		if !strings.Contains(byID[id], want) {
			t.Errorf("%s: %q lacks %q", id, byID[id], want)
		}
	}
	// The timeline's events and mark link to their quotes too.
	svgLinks := 0
	for _, fig := range elements(doc, func(n *html.Node) bool { return n.Data == "svg" && hasClass(n, "tl") }) {
		svgLinks += len(elements(fig, func(n *html.Node) bool { h, _ := attr(n, "href"); return n.Data == "a" && strings.HasPrefix(h, "#q-") }))
		for _, want := range []string{"10.244.1.7:8080", "aa:bb:cc:00:00:01", "first stale DNAT", "+0 s", "+30 s"} {
			if !strings.Contains(textOf(fig), want) {
				t.Errorf("the chart lacks %q", want)
			}
		}
	}
	if svgLinks < 5 {
		t.Errorf("%d links from the chart to the appendix", svgLinks)
	}
	if strings.Contains(out, "http://") || strings.Contains(out, "https://") {
		t.Errorf("the page names a URL")
	}
}

func firstElement(n *html.Node) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return c
		}
	}
	return nil
}

// TestHTMLHostile checks that hostile names in findings, timelines and
// quotes reach the page as text, escaped: no element or attribute of
// theirs, no control character, no bidi override.
func TestHTMLHostile(t *testing.T) {
	r := hostileReport()
	markup := `<script>alert(1)</script><img src=x onerror=alert(2)>"'><a href="https://evil.example/">x</a>`
	r.Findings[0].Fingerprint = "abc"
	r.Findings[0].Title += markup
	r.Findings[0].Alternatives = []string{markup}
	r.Timelines = map[string]*report.Timeline{"abc": {
		Title: markup, Start: t0, End: t0.Add(time.Minute),
		Lanes: []report.Lane{{Name: hostile[0] + markup,
			Events: []report.Event{{Time: t0.Add(time.Second), Kind: markup, Label: hostile[2] + markup, Pos: model.Pos{File: hostile[3], Line: 1}}},
			Spans:  []report.Span{{Start: t0, End: t0.Add(50 * time.Second), Kind: markup, Label: markup + hostile[1]}}}},
		Marks: []report.Mark{{Time: t0.Add(2 * time.Second), Label: markup + hostile[3]}},
	}}
	r.Quotes = []report.Quote{{Pos: model.Pos{File: hostile[3], Line: 1}, Text: hostile[0] + "\t\x1b[31m\t" + markup}}
	doc, out := parseHTML(t, r)
	checkSelfContained(t, doc)
	if strings.ContainsAny(out, "\x1b\r\u202e") {
		t.Error("an ESC, CR or bidi override reached the page")
	}
	for i, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), forged) {
			t.Errorf("line %d is forged: %q", i+1, line)
		}
	}
	text := textOf(doc)
	for _, want := range []string{`bundle/node1\n` + forged, `\x1b[2J\x1b[31mred.txt`, `evil\u202etxt.pcap`, markup, "\t\\x1b[31m\t"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page's text lacks %q", want)
		}
	}
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "a" {
			if h, _ := attr(n, "href"); strings.Contains(h, "evil") {
				t.Errorf("a link from the bundle became a link: %q", h)
			}
		}
	})
}

// TestHTMLLargeTimeline draws a timeline of 50,000 events and 5,000 owner
// changes: the SVG stays small and its counts add up.
func TestHTMLLargeTimeline(t *testing.T) {
	r := fixedReport()
	var events []report.Event
	kinds := []string{report.EventEstablished, report.EventReset, report.EventFailed}
	for i := range 50000 {
		events = append(events, report.Event{Time: t0.Add(time.Duration(i) * 7 * time.Millisecond), Kind: kinds[i%3],
			Label: "attempt", Pos: model.Pos{File: "big.pcap", Frame: i + 1}})
	}
	var spans []report.Span
	for i := range 5000 {
		spans = append(spans, report.Span{Start: t0.Add(time.Duration(i) * 70 * time.Millisecond), End: t0.Add(time.Duration(i+1) * 70 * time.Millisecond),
			Kind: report.SpanOwner, Label: fmt.Sprintf("aa:bb:cc:00:00:%02x", i%2)})
	}
	var marks []report.Mark
	for i := range 100 {
		marks = append(marks, report.Mark{Time: t0.Add(time.Duration(i) * 3 * time.Second), Label: "mark"})
	}
	// The worst case: lanes of every kind of event, lanes with a few
	// events each, lanes of flapping states, and many marks and windows.
	every := []string{report.EventEstablished, report.EventFailed, report.EventReset, report.EventICMP,
		report.EventARP, report.EventRestart, report.EventError, report.EventInfo}
	lanes := []report.Lane{{Name: "server A", Events: events}, {Name: "VIP", Spans: spans}}
	for i := range 5 {
		lanes = append(lanes, report.Lane{Name: fmt.Sprintf("few %d", i), Events: events[i : i+6]})
	}
	for i := range 5 {
		lanes = append(lanes, report.Lane{Name: fmt.Sprintf("VIP %d", i), Spans: spans[i*1000 : (i+1)*1000]})
	}
	for i := range 60 {
		l := report.Lane{Name: fmt.Sprintf("server %d", i)}
		for j, e := range events[i*800 : (i+1)*800] {
			e.Kind = every[j%len(every)]
			l.Events = append(l.Events, e)
		}
		lanes = append(lanes, l)
	}
	r.Timelines = map[string]*report.Timeline{r.Findings[0].Fingerprint: {Title: "big", Lanes: lanes, Marks: marks, Spans: spans[:100]}}
	doc, out := parseHTML(t, r)
	checkSelfContained(t, doc)
	svgs := elements(doc, func(n *html.Node) bool { return n.Data == "svg" && hasClass(n, "tl") })
	if len(svgs) != 1 {
		t.Fatalf("%d charts", len(svgs))
	}
	n := len(elements(svgs[0], func(*html.Node) bool { return true }))
	if n > 2000 {
		t.Errorf("the chart has %d elements, want at most 2000", n)
	}
	t.Logf("%d elements, %d bytes", n, len(out))
	if len(out) > 1<<20 {
		t.Errorf("the page is %d bytes", len(out))
	}
	// The first lane's columns count every one of its events.
	total := 0
	lane := 0
	walk(svgs[0], func(n *html.Node) {
		if n.Type != html.ElementNode || n.Data != "title" || lane > 0 {
			return
		}
		s := textOf(n)
		if strings.HasPrefix(s, "VIP") {
			lane++
			return
		}
		var a, b, c int
		if k, _ := fmt.Sscanf(s, "%d established, %d failed, no reset, %d reset", &a, &b, &c); k == 3 {
			total += a + b + c
		}
	})
	if total != 50000 {
		t.Errorf("the first lane's columns count %d events, want 50000", total)
	}
	for _, want := range []string{"more rows not drawn", "more marks not drawn", "drawn as columns", "states changing too often"} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks the note %q", want)
		}
	}
}

// TestHTMLAxis checks the axis's labels: seconds for a short span, the
// time of day for a long one.
func TestHTMLAxis(t *testing.T) {
	for _, c := range []struct {
		span time.Duration
		want []string
	}{
		{1500 * time.Millisecond, []string{"+0 s", "+0.5 s", "+1 s", "Seconds after 2026-11-24 10:00:00.000 UTC"}},
		{2 * time.Hour, []string{"10:00", "10:30", "12:00", "Times in UTC"}},
		{10 * 24 * time.Hour, []string{"Nov 25", "Dec 3", "from 2026-11-24 10:00:00 to 2026-12-04 10:00:00"}},
		// A capture's clock that was never set puts one end in 1970.
		{-time.Duration(t0.Sub(time.Unix(0, 0))), []string{"1970-01-01", "2015-", "from 1970-01-01 00:00:00 to 2026-11-24 10:00:00"}},
	} {
		start, end := t0, t0.Add(c.span)
		if c.span < 0 {
			start, end = end, start
		}
		r := fixedReport()
		r.Timelines = map[string]*report.Timeline{r.Findings[0].Fingerprint: {Title: "axis", Start: start, End: end,
			Lanes: []report.Lane{{Name: "x", Events: []report.Event{
				{Time: start.Add(end.Sub(start) / 2), Kind: report.EventInfo, Label: "middle"},
				{Kind: report.EventReset, Label: "not placed in time"},
			}}}}}
		doc, _ := parseHTML(t, r)
		figs := elements(doc, func(n *html.Node) bool { return n.Data == "figure" })
		if len(figs) != 1 {
			t.Fatalf("%v: %d figures", c.span, len(figs))
		}
		text := textOf(figs[0])
		ticks := elements(figs[0], func(n *html.Node) bool { return n.Data == "text" && hasClass(n, "tickl") })
		if len(ticks) < 2 || len(ticks) > 7 {
			t.Errorf("%v: %d ticks", c.span, len(ticks))
		}
		if strings.Contains(text, "not placed in time") || !strings.Contains(text, "middle") {
			t.Errorf("%v: an event without a time was drawn, or the one with a time was not", c.span)
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%v: the chart lacks %q:\n%s", c.span, w, text)
			}
		}
	}
}

// TestHTMLAxisYearless checks a chart of log lines that give no year or
// zone (klog, syslog: read in year 0, UTC): it shows neither the year 0000
// nor "UTC", and says the times are as the lines give them.
func TestHTMLAxisYearless(t *testing.T) {
	start := time.Date(0, 1, 26, 20, 40, 24, 739000000, time.UTC)
	for _, span := range []time.Duration{50 * time.Second, 3 * time.Hour} {
		r := fixedReport()
		r.Timelines = map[string]*report.Timeline{r.Findings[0].Fingerprint: {Title: "kube-proxy errors", Start: start, End: start.Add(span),
			Lanes: []report.Lane{{Name: "kube-proxy", Events: []report.Event{
				{Time: start.Add(span / 2), Kind: report.EventError, Label: "Failed to watch"},
			}}}}}
		// An event without an End (the zero time, year 1, after year 0)
		// is an instant, not a stretch of time.
		if n := strings.Count(func() string { _, o := parseHTML(t, r); return o }(), `class="range"`); n != 0 {
			t.Errorf("%v: %d yearless events drawn as stretches of time", span, n)
		}
		doc, out := parseHTML(t, r)
		figs := elements(doc, func(n *html.Node) bool { return n.Data == "figure" })
		if len(figs) != 1 {
			t.Fatalf("%v: %d figures", span, len(figs))
		}
		fig := out[strings.Index(out, "<figure"):strings.Index(out, "</figure>")]
		for _, bad := range []string{"0000", "UTC"} {
			if strings.Contains(fig, bad) {
				t.Errorf("%v: the chart of yearless times says %q:\n%s", span, bad, fig)
			}
		}
		for _, want := range []string{"Jan 26 20:40:24", "no year and no time zone"} {
			if !strings.Contains(textOf(figs[0]), want) {
				t.Errorf("%v: the chart lacks %q:\n%s", span, want, textOf(figs[0]))
			}
		}
	}
}

// TestHTMLNoFindings renders a report without findings, and one that is
// incomplete.
func TestHTMLNoFindings(t *testing.T) {
	r := report.New(nil, nil, analyzer.Result{})
	r.Incomplete = []string{"missing.pcap: no such file or directory"}
	doc, out := parseHTML(t, r)
	checkSelfContained(t, doc)
	for _, want := range []string{`data-findings="0"`, "No findings in what could be read", "The analysis is incomplete", "missing.pcap: no such file"} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestHTMLSuppressed shows the suppressed findings when they are asked for,
// and counts them otherwise.
func TestHTMLSuppressed(t *testing.T) {
	sup := []analyzer.Suppressed{{Finding: analyzer.Finding{Rule: "stale-dnat", Fingerprint: "ffee", Severity: analyzer.Warning,
		Title: "stale DNAT to 10.244.9.9"}, By: ".netmortem.yaml:4", Reason: "known, ticket 12"}}
	for _, show := range []bool{false, true} {
		r := fixedReport()
		r.SetSuppressed(sup, show)
		doc, out := parseHTML(t, r)
		checkSelfContained(t, doc)
		section := elements(doc, func(n *html.Node) bool { id, _ := attr(n, "id"); return id == "suppressed" })
		if show != (len(section) == 1) {
			t.Errorf("show %v: %d suppressed sections", show, len(section))
		}
		if show && !strings.Contains(textOf(section[0]), "by .netmortem.yaml:4: known, ticket 12") {
			t.Errorf("the suppressed section lacks why: %q", textOf(section[0]))
		}
		if !show && !strings.Contains(out, "1 finding suppressed (--show-suppressed lists them).") {
			t.Errorf("show %v: no count of the suppressed findings", show)
		}
	}
}

// TestHTMLBriefOwner checks that an owner held briefly before another
// takes over (one change of ARP owner) is drawn as its own state, not as
// the grey bar of states changing too often.
func TestHTMLBriefOwner(t *testing.T) {
	r := fixedReport()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	r.Timelines = map[string]*report.Timeline{r.Findings[0].Fingerprint: {Title: "ARP owner", Start: t0, End: at(9000),
		Lanes: []report.Lane{{Name: "IP 192.168.200.99", Spans: []report.Span{
			{Start: at(0), End: at(62), Kind: report.SpanOwner, Label: "00:22:4d:a8:ba:40"},
			{Start: at(62), End: at(9000), Kind: report.SpanOwner, Label: "00:22:4d:a8:ba:4c"},
		}}}}}
	_, out := parseHTML(t, r)
	if strings.Contains(out, "changes between") || strings.Contains(out, "states changing too often") {
		t.Error("one change of owner is drawn as states changing too often")
	}
	for _, want := range []string{"00:22:4d:a8:ba:40: 2026-11-24 10:00:00.000 UTC", "00:22:4d:a8:ba:4c: 2026-11-24 10:00:00.062 UTC"} {
		if !strings.Contains(out, want) {
			t.Errorf("the chart lacks the bar %q", want)
		}
	}
}

// TestHTMLEventRange checks that an event standing for many over a stretch
// of time is drawn with a bar over that stretch, says it in its tooltip,
// and that in a lane of columns its count is spread over the columns it
// covers.
func TestHTMLEventRange(t *testing.T) {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	r := fixedReport()
	r.Timelines = map[string]*report.Timeline{r.Findings[0].Fingerprint: {Title: "attempts", Start: t0, End: at(1000),
		Lanes: []report.Lane{{Name: "10.244.5.11:8080", Events: []report.Event{
			{Time: at(0), End: at(600), Kind: report.EventEstablished, Count: 8, Label: "8 established attempts"},
		}}}}}
	doc, out := parseHTML(t, r)
	bars := elements(doc, func(n *html.Node) bool { return n.Data == "rect" && hasClass(n, "range") })
	if len(bars) != 1 {
		t.Fatalf("%d range bars, want 1", len(bars))
	}
	if w, _ := attr(bars[0], "width"); w != "374.4" {
		t.Errorf("range bar %s wide, want 374.4 (0.6 of 624)", w)
	}
	if !strings.Contains(out, "10:00:00.000 UTC (&#43;0 s) to 2026-11-24 10:00:00.600 UTC (&#43;0.6 s): 8 established") {
		t.Error("the tooltip does not give the stretch of time")
	}
	// Many such events: columns, the count spread from start to end.
	var events []report.Event
	for i := range 300 {
		events = append(events, report.Event{Time: at(i), Kind: report.EventReset, Label: "reset"})
	}
	events = append(events, report.Event{Time: at(0), End: at(1000), Kind: report.EventEstablished, Count: 1000, Label: "counted"})
	r.Timelines[r.Findings[0].Fingerprint].Lanes[0].Events = events
	doc, _ = parseHTML(t, r)
	cols, total := 0, 0
	walk(doc, func(n *html.Node) {
		var k int
		if n.Type == html.ElementNode && n.Data == "title" {
			if _, err := fmt.Sscanf(textOf(n), "%d established", &k); err == nil {
				cols++
				total += k
			}
		}
	})
	if total != 1000 || cols < 10 {
		t.Errorf("the counted attempts are in %d columns counting %d, want spread over them all counting 1000", cols, total)
	}
}

// TestHTMLSpanLabelClearOfShapes checks that a bar's label is placed where
// no event's shape on the lane covers it: the MAC owning a VIP after its
// ARP claims, not under them.
func TestHTMLSpanLabelClearOfShapes(t *testing.T) {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	r := fixedReport()
	r.Timelines = map[string]*report.Timeline{r.Findings[0].Fingerprint: {Title: "ARP owner", Start: t0, End: at(8381),
		Lanes: []report.Lane{{Name: "IP 192.168.200.99",
			Spans: []report.Span{{Start: at(62), End: at(8381), Kind: report.SpanOwner, Label: "00:22:4d:a8:ba:4c"}},
			Events: []report.Event{
				{Time: at(62), Kind: report.EventARP, Label: "gratuitous request"},
				{Time: at(1064), Kind: report.EventARP, Label: "gratuitous request"},
			}}}}}
	doc, _ := parseHTML(t, r)
	labels := elements(doc, func(n *html.Node) bool { return n.Data == "text" && hasClass(n, "spanl") })
	if len(labels) != 1 {
		t.Fatalf("%d bar labels, want 1", len(labels))
	}
	xs, _ := attr(labels[0], "x")
	var x float64
	fmt.Sscanf(xs, "%g", &x)
	w := float64(len("00:22:4d:a8:ba:4c")) * 9
	for _, u := range elements(doc, func(n *html.Node) bool { return n.Data == "use" }) {
		us, _ := attr(u, "x")
		var ux float64
		fmt.Sscanf(us, "%g", &ux)
		if ux+9 > x && ux-9 < x+w {
			t.Errorf("the label at %g..%g runs under the shape at %g", x, x+w, ux)
		}
	}
}

// TestHTMLCollectLinks checks that "To decide, collect" links the findings
// a command decides to their sections, by "finding N", not by the "[N]"
// of the text formats, which the page uses for its appendix entries. The
// finding is left undecided: the section lists only what would change the
// answer.
func TestHTMLCollectLinks(t *testing.T) {
	r := fixedReport()
	r.Findings[0].Certainty = analyzer.Likely
	f := r.Findings[0]
	r.NextEvidence = []report.NextEvidence{{Shell: "ip -d link", Scope: "node", Nodes: []string{"node-1"},
		Decides: []string{f.Fingerprint}}}
	doc, _ := parseHTML(t, r)
	sec := elements(doc, func(n *html.Node) bool {
		id, _ := attr(n, "id")
		return n.Data == "section" && id == "collect"
	})
	if len(sec) != 1 {
		t.Fatalf("%d collect sections", len(sec))
	}
	text := textOf(sec[0])
	want := "on node-1; decides finding 1 (" + f.Rule + ")"
	if !strings.Contains(text, want) || strings.Contains(text, "[1]") {
		t.Errorf("the section says %q, want %q", text, want)
	}
	links := elements(sec[0], func(n *html.Node) bool {
		href, _ := attr(n, "href")
		return n.Data == "a" && href == "#f-"+f.Fingerprint
	})
	if len(links) != 1 {
		t.Errorf("%d links to the finding decided, want 1", len(links))
	}
}

// TestHTMLWholeFileQuote checks that the appendix entry of a position
// naming a whole file (attempts a capture only counted) says there is no
// line or frame to quote, not that a quote is missing.
func TestHTMLWholeFileQuote(t *testing.T) {
	r := fixedReport()
	r.Findings[0].Evidence = []analyzer.Evidence{{Pos: model.Pos{File: "bundle/capture.pcap"}, Note: "8 established attempts counted"}}
	doc, _ := parseHTML(t, r)
	n := 0
	for _, li := range elements(doc, func(n *html.Node) bool { return n.Data == "li" && hasClass(n, "quote") }) {
		if text := textOf(li); strings.Contains(text, "bundle/capture.pcap") {
			n++
			if !strings.Contains(text, "The whole file: no single line or frame to quote.") {
				t.Errorf("the whole file's appendix entry says %q", text)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d appendix entries for the whole file, want 1", n)
	}
}
