package browser

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const loadTimeout = time.Minute

var (
	once    sync.Once
	shared  *Browser
	startEr error
)

// start returns the browser the tests share, started on first use; TestMain
// closes it.
func start(t *testing.T) *Browser {
	t.Helper()
	exe := Require(t)
	once.Do(func() { shared, startEr = Start(context.Background(), exe, 5*time.Minute) })
	if startEr != nil {
		t.Fatal(startEr)
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Close()
	os.Exit(code)
}

func load(t *testing.T, name string, vp Viewport) *Page {
	t.Helper()
	p, err := start(t).Load(t.Context(), filepath.Join("testdata", name), vp, loadTimeout, WithScreenshot)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReportSamplePasses(t *testing.T) {
	want := Want{Fingerprints: []string{"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"},
		Timelines: []string{"aaaaaaaaaaaaaaaa"}, TimelinesKnown: true, MinQuotes: 3}
	for _, vp := range []Viewport{Desktop, Phone} {
		t.Run(strconv.Itoa(int(vp.Width)), func(t *testing.T) {
			p := load(t, "report.html", vp)
			if probs := p.Problems(); len(probs) > 0 {
				t.Errorf("problems:\n%s", strings.Join(probs, "\n"))
			}
			if probs := p.CheckReport(want); len(probs) > 0 {
				t.Errorf("report contract:\n%s", strings.Join(probs, "\n"))
			}
			if p.InnerWidth != int(vp.Width) {
				t.Errorf("innerWidth %d, want %d", p.InnerWidth, vp.Width)
			}
			if len(p.Findings) != 2 || len(p.Timelines) != 1 || p.TimelineSVGs != 1 || len(p.Quotes) != 3 {
				t.Errorf("counted %d findings, %d timelines (%d svg), %d quotes; want 2, 1 (1), 3",
					len(p.Findings), len(p.Timelines), p.TimelineSVGs, len(p.Quotes))
			}
			if len(p.Requests) == 0 || p.Requests[0].URL != p.URL {
				t.Errorf("requests %v: want the page's own first", p.Requests)
			}
			if d := p.DataURIs(); len(d) != 1 || !strings.HasPrefix(d[0], "data:image/svg+xml") {
				t.Errorf("data: URIs %v, want the one svg image", d)
			}
			img, err := png.DecodeConfig(bytes.NewReader(p.Screenshot))
			if err != nil {
				t.Fatalf("screenshot is not a PNG: %v", err)
			}
			if img.Width != int(vp.Width) || img.Height < int(vp.Height) {
				t.Errorf("screenshot %dx%d, want %d wide and at least %d high", img.Width, img.Height, vp.Width, vp.Height)
			}
			fig := p.Timelines[0].Bottom
			if fig <= 0 || fig >= img.Height {
				t.Fatalf("the timeline's bottom at %dpx, want inside the %dpx page", fig, img.Height)
			}
			top, err := p.Top(fig)
			if err != nil {
				t.Fatal(err)
			}
			cut, err := png.DecodeConfig(bytes.NewReader(top))
			if err != nil || cut.Width != img.Width || cut.Height != fig {
				t.Errorf("top %d pixels: %dx%d (%v), want %dx%d", fig, cut.Width, cut.Height, err, img.Width, fig)
			}
			if whole, err := p.Top(img.Height + 10); err != nil || !bytes.Equal(whole, p.Screenshot) {
				t.Errorf("the top of more than the page is not the whole screenshot (%v)", err)
			}
		})
	}
}

// TestScreenshotOnlyAsked checks that Load takes no screenshot unless
// given WithScreenshot.
func TestScreenshotOnlyAsked(t *testing.T) {
	p, err := start(t).Load(t.Context(), filepath.Join("testdata", "report.html"), Desktop, loadTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if p.Screenshot != nil || len(p.Findings) != 2 {
		t.Errorf("without WithScreenshot: %d bytes of screenshot, %d findings; want none and 2", len(p.Screenshot), len(p.Findings))
	}
}

func TestOverflowFoundOnlyWhereItHappens(t *testing.T) {
	if probs := load(t, "overflow.html", Desktop).Problems(); len(probs) > 0 {
		t.Errorf("at 1280px the 900px table fits, but: %v", probs)
	}
	p := load(t, "overflow.html", Phone)
	probs := strings.Join(p.Problems(), "\n")
	for _, want := range []string{"scrollWidth 900 > innerWidth 390", "past the right edge: table#wide (right edge at 900px)"} {
		if !strings.Contains(probs, want) {
			t.Errorf("at 390px the problems lack %q:\n%s", want, probs)
		}
	}
	if strings.Contains(probs, "td") {
		t.Errorf("cells inside the offending table are listed too:\n%s", probs)
	}
}

func TestRequestsLeavingThePageAreBlockedAndListed(t *testing.T) {
	p := load(t, "requests.html", Desktop)
	var urls []string
	for _, r := range p.Outside() {
		urls = append(urls, r.URL)
	}
	own, _ := filepath.Abs(filepath.Join("testdata", "report.html"))
	for _, want := range []string{"https://fonts.example.invalid/font.css", "http://cdn.example.invalid/logo.png",
		"https://telemetry.example.invalid/t", "file://" + filepath.ToSlash(own)} {
		if !slices.Contains(urls, want) {
			t.Errorf("requests outside the page %v lack %s", urls, want)
		}
	}
	if d := p.DataURIs(); len(d) != 1 {
		t.Errorf("data: URIs %v, want the gif; requests %v", d, p.Requests)
	}
	if !strings.Contains(strings.Join(p.Problems(), "\n"), "request leaves the page: Stylesheet https://fonts.example.invalid/font.css") {
		t.Errorf("problems do not name the stylesheet request: %v", p.Problems())
	}
}

func TestConsoleErrorsAndDeadLinks(t *testing.T) {
	p := load(t, "errors.html", Desktop)
	got := strings.Join(p.Console, "\n")
	for _, want := range []string{"console.error: chart data missing for f-1", "uncaught exception: ", "undefinedFunction is not defined"} {
		if !strings.Contains(got, want) {
			t.Errorf("console %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "not an error") {
		t.Errorf("console.log recorded as an error: %q", got)
	}
	if !slices.Equal(p.BrokenLinks, []string{"#q-9"}) {
		t.Errorf("broken links %v, want [#q-9]", p.BrokenLinks)
	}
}

func TestReportContractViolations(t *testing.T) {
	p := load(t, "broken-contract.html", Desktop)
	want := Want{Fingerprints: []string{"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"}, MinQuotes: 4}
	got := strings.Join(p.CheckReport(want), "\n")
	for _, w := range []string{
		`body data-findings="3", want 2`,
		`section.finding id="finding-2" data-fingerprint="bbbbbbbbbbbbbbbb": want id f-bbbbbbbbbbbbbbbb`,
		"no section#verdict", "no section#appendix",
		"figure.timeline 1 (aaaaaaaaaaaaaaaa) has no svg",
		`figure.timeline 2 (bbbbbbbbbbbbbbbb) is inside the section of finding ""`,
		"3 li.quote in the appendix, want at least 4",
		`two li.quote with id "q-1"`, `li.quote id="quote3", want q-N`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("contract problems lack %q:\n%s", w, got)
		}
	}
	// The sample report checked against findings it does not show.
	p = load(t, "report.html", Desktop)
	got = strings.Join(p.CheckReport(Want{Fingerprints: []string{"aaaaaaaaaaaaaaaa", "cccccccccccccccc"},
		Timelines: []string{"cccccccccccccccc"}, TimelinesKnown: true}), "\n")
	for _, w := range []string{
		"finding cccccccccccccccc has 0 section.finding, want 1",
		`section.finding for "bbbbbbbbbbbbbbbb", which is not a finding of the report`,
		"finding cccccccccccccccc has a timeline but no figure.timeline",
		"figure.timeline for aaaaaaaaaaaaaaaa, which has no timeline",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("contract problems lack %q:\n%s", w, got)
		}
	}
}
