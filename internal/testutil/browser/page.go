package browser

import (
	"context"
	_ "embed" // the page probe
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

//go:embed probe.js
var probeJS string

// Viewport is the size of the window a page is laid out in, at a device
// scale factor of 1.
type Viewport struct {
	Width, Height int64
}

// The two widths the HTML report is checked at: a laptop's window and a
// phone's.
var (
	Desktop = Viewport{Width: 1280, Height: 800}
	Phone   = Viewport{Width: 390, Height: 844}
)

// Request is one request the page made.
type Request struct {
	URL string
	// Type is the resource type Chromium gives: Document, Image,
	// Stylesheet, Font, Script, Fetch, WebSocket...
	Type string
}

// Section is one section.finding of a report.
type Section struct {
	ID          string `json:"id"`
	Fingerprint string `json:"fingerprint"`
}

// Figure is one figure.timeline of a report.
type Figure struct {
	// Fingerprint is the figure's data-fingerprint.
	Fingerprint string `json:"fingerprint"`
	// Section is the data-fingerprint of the section.finding around the
	// figure ("" when it is in none).
	Section string `json:"section"`
	// SVGs counts the svg elements inside the figure.
	SVGs int `json:"svgs"`
	// Bottom is the figure's bottom edge in page pixels from the top.
	Bottom int `json:"bottom"`
}

// probe is what probe.js returns.
type probe struct {
	InnerWidth      int       `json:"innerWidth"`
	ScrollWidth     int       `json:"scrollWidth"`
	Offenders       []string  `json:"offenders"`
	HasDataFindings bool      `json:"hasDataFindings"`
	DataFindings    string    `json:"dataFindings"`
	Findings        []Section `json:"findings"`
	Timelines       []Figure  `json:"timelines"`
	TimelineSVGs    int       `json:"timelineSVGs"`
	Quotes          []string  `json:"quotes"`
	BrokenLinks     []string  `json:"brokenLinks"`
	DataURIs        []string  `json:"dataURIs"`
	Verdict         bool      `json:"verdict"`
	Appendix        bool      `json:"appendix"`
}

// Page is what loading one page at one viewport found.
type Page struct {
	// URL is the file:// URL the page was opened at.
	URL      string
	Viewport Viewport
	// Requests are all the requests the page made, its own document
	// included, in the order they were made. Requests other than the
	// page's own URL and data: URIs were failed before they left.
	Requests []Request
	// Console are the console errors and assertions, the uncaught
	// exceptions and the browser's error log entries (a failed load).
	Console []string
	// InnerWidth is window.innerWidth, ScrollWidth
	// document.documentElement.scrollWidth.
	InnerWidth, ScrollWidth int
	// Overflow lists, by CSS selector, the outermost elements whose box
	// extends past the viewport's right edge (outside a box that clips or
	// scrolls them and itself fits).
	Overflow []string
	// HasDataFindings says whether body has a data-findings attribute;
	// DataFindings is its value.
	HasDataFindings bool
	DataFindings    string
	// Findings are the section.finding elements, in document order.
	Findings []Section
	// Timelines are the figure.timeline elements, in document order;
	// TimelineSVGs counts the "figure.timeline svg" elements.
	Timelines    []Figure
	TimelineSVGs int
	// Quotes are the ids of the li.quote elements.
	Quotes []string
	// BrokenLinks are the hrefs of a[href^="#"] links whose target is not
	// in the page.
	BrokenLinks []string
	// data are the data: URIs the page refers to in attributes and style
	// sheets (DataURIs adds those requested).
	data []string
	// Verdict and Appendix say whether section#verdict and
	// section#appendix are present.
	Verdict, Appendix bool
	// Screenshot is a PNG of the whole page, when Load was given
	// WithScreenshot.
	Screenshot []byte
}

// A LoadOption adds to what Load takes of a page.
type LoadOption int

// WithScreenshot has Load take a PNG of the whole page (Page.Screenshot):
// the browser encodes it and sends it base64-encoded, a few megabytes for
// a long report, so Load takes one only when asked.
const WithScreenshot LoadOption = 1

// Load opens the HTML file at path in a new tab laid out at vp, waits for it
// to load and settle, and measures it. The tab is closed on return. timeout
// bounds the whole load. Load may be called from several goroutines: each
// load has its own tab.
func (b *Browser) Load(ctx context.Context, path string, vp Viewport, timeout time.Duration, opts ...LoadOption) (*Page, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	pageURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	p := &Page{URL: pageURL, Viewport: vp}
	// What the tab reports, until Load copies it into p: the listener may
	// still run after Load returns.
	var (
		mu       sync.Mutex
		requests []Request
		console  []string
	)
	record := func(ev any) {
		// Runs in the tab's event loop: it only records.
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if ev.Request != nil {
				requests = append(requests, Request{URL: ev.Request.URL, Type: string(ev.Type)})
			}
		case *network.EventWebSocketCreated:
			requests = append(requests, Request{URL: ev.URL, Type: "WebSocket"})
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				console = append(console, "console."+string(ev.Type)+": "+remoteText(ev.Args))
			}
		case *runtime.EventExceptionThrown:
			console = append(console, "uncaught exception: "+exceptionText(ev.ExceptionDetails))
		case *log.EventEntryAdded:
			if e := ev.Entry; e != nil && e.Level == log.EntryLevelError {
				console = append(console, "log: "+e.Text+at(e.URL))
			}
		}
	}
	// The tab lives as long as the browser's context; lctx bounds the load.
	tab, closeTab := chromedp.NewContext(b.ctx, chromedp.WithListener(record))
	defer closeTab()
	if err := chromedp.Do(tab); err != nil {
		return nil, fmt.Errorf("load %s: open a tab: %w", path, err)
	}
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(lctx, closeTab)
	defer stop()

	// Every request is paused; only the page's own URL goes on, anything
	// else fails as blocked, so nothing leaves the machine.
	paused := chromedp.Events(tab, fetch.RequestPaused)
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			if ev.Request != nil && ev.Request.URL == pageURL {
				_, _ = chromedp.Call(tab, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
			} else {
				_, _ = chromedp.Call(tab, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
			}
		}
	}()
	enable := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}})
		return err
	})
	if err := chromedp.Do(tab, enable, chromedp.EmulateViewport(vp.Width, vp.Height, chromedp.EmulateScale(1))); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	run := func(err error) error {
		if err != nil && lctx.Err() != nil {
			return fmt.Errorf("load %s at %dpx: no result within %s: %w", path, vp.Width, timeout, err)
		}
		return err
	}
	if err := run(chromedp.Do(tab, chromedp.Navigate(pageURL))); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if err := settle(tab, func() int { mu.Lock(); defer mu.Unlock(); return len(requests) }); err != nil {
		return nil, run(fmt.Errorf("load %s: %w", path, err))
	}
	raw, err := chromedp.Run(tab, chromedp.Evaluate[[]byte](probeJS))
	if err != nil {
		return nil, run(fmt.Errorf("load %s: measure the page: %w", path, err))
	}
	var m probe
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("load %s: the page probe returned %.200s: %w", path, raw, err)
	}
	var shot []byte
	if slices.Contains(opts, WithScreenshot) {
		if shot, err = chromedp.Run(tab, chromedp.FullScreenshot(100)); err != nil {
			return nil, run(fmt.Errorf("load %s: screenshot: %w", path, err))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	p.InnerWidth, p.ScrollWidth, p.Overflow = m.InnerWidth, m.ScrollWidth, m.Offenders
	p.HasDataFindings, p.DataFindings = m.HasDataFindings, m.DataFindings
	p.Findings, p.Timelines, p.TimelineSVGs = m.Findings, m.Timelines, m.TimelineSVGs
	p.Quotes, p.BrokenLinks, p.data = m.Quotes, m.BrokenLinks, m.DataURIs
	p.Verdict, p.Appendix = m.Verdict, m.Appendix
	p.Screenshot = shot
	p.Requests = slices.Clone(requests)
	p.Console = slices.Clone(console)
	return p, nil
}

// settle waits, after the load event, for two animation frames and then
// until no new request has been made for a tenth of a second (at most
// three seconds), so that what a script starts after load is seen too.
func settle(tab context.Context, requests func() int) error {
	const frames = `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`
	if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](frames, chromedp.EvalAwaitPromise)); err != nil {
		return fmt.Errorf("wait for the page to render: %w", err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for n := requests(); time.Now().Before(deadline); {
		select {
		case <-tab.Done():
			return tab.Err()
		case <-time.After(100 * time.Millisecond):
		}
		m := requests()
		if m == n {
			return nil
		}
		n = m
	}
	return nil
}

// Outside returns the requests other than the page's own document and data:
// URIs: those that would have left the page.
func (p *Page) Outside() []Request {
	var out []Request
	for _, r := range p.Requests {
		if r.URL != p.URL && !strings.HasPrefix(r.URL, "data:") {
			out = append(out, r)
		}
	}
	return out
}

// DataURIs returns the data: URIs the page requested or refers to in an
// attribute or a style sheet, once each, each cut to 60 bytes.
func (p *Page) DataURIs() []string {
	var out []string
	seen := map[string]bool{}
	add := func(u string) {
		if seen[u] {
			return
		}
		seen[u] = true
		if len(u) > 60 {
			u = u[:60] + "…"
		}
		out = append(out, u)
	}
	for _, r := range p.Requests {
		if strings.HasPrefix(r.URL, "data:") {
			add(r.URL)
		}
	}
	for _, u := range p.data {
		add(u)
	}
	return out
}

// maxListed is how many elements past the right edge Problems names.
const maxListed = 20

// Problems lists what is wrong with any page, whatever it shows: horizontal
// overflow, requests that would leave the page, console errors, and in-page
// links without a target. Each says where, for a test's failure message.
func (p *Page) Problems() []string {
	var out []string
	if p.ScrollWidth > p.InnerWidth {
		out = append(out, fmt.Sprintf("the page scrolls horizontally: scrollWidth %d > innerWidth %d", p.ScrollWidth, p.InnerWidth))
	}
	for i, o := range p.Overflow {
		if i == maxListed {
			out = append(out, fmt.Sprintf("and %d more elements past the right edge", len(p.Overflow)-i))
			break
		}
		out = append(out, "past the right edge: "+o)
	}
	for _, r := range p.Outside() {
		out = append(out, fmt.Sprintf("request leaves the page: %s %s", r.Type, r.URL))
	}
	out = append(out, p.Console...)
	for _, l := range p.BrokenLinks {
		out = append(out, "link to a missing target: "+l)
	}
	return out
}

// remoteText renders console arguments as the console shows them: strings
// as they are, other values as their JSON or description.
func remoteText(args []*runtime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		if a == nil {
			continue
		}
		var s string
		switch {
		case len(a.Value) > 0 && json.Unmarshal(a.Value, &s) == nil:
		case len(a.Value) > 0:
			s = string(a.Value)
		case a.Description != "":
			s = a.Description
		default:
			s = string(a.Type)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// exceptionText says what an uncaught exception was and where.
func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "(no details)"
	}
	s := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		s += " " + d.Exception.Description
	}
	return s + at(fmt.Sprintf("%s:%d", d.URL, d.LineNumber+1))
}

// at is " (at where)", or "" when where is empty.
func at(where string) string {
	if where == "" || strings.HasPrefix(where, ":") {
		return ""
	}
	return " (at " + where + ")"
}
