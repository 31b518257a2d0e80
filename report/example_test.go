package report_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
)

// Write the findings of a bundle in the compact text form; "markdown",
// "json", "yaml", "sarif", "html" and "table" work the same way.
func ExampleWrite() {
	ctx := context.Background()
	snap, warnings, err := parse.Open(ctx, "../fixtures/seeds/001-probe-restart-loop", nil)
	if err != nil {
		panic(err)
	}
	res := analyzer.Run(ctx, snap, []*analyzer.Rule{rules.VersionSkew}, nil)
	rep := report.New(snap, warnings, res)
	if err := report.Write(os.Stdout, "text", rep); err != nil {
		panic(err)
	}
	// Output:
	// ../fixtures/seeds/001-probe-restart-loop/nodes.txt:6:0: warning: version-skew: kubelet versions differ: antidote-worker-gt5t (v1.11.3) against v1.12 on the other nodes (cause likely) [Node antidote-worker-gt5t: node antidote-worker-gt5t runs kubelet v1.11.3]
}

// Write the HTML report of a finding with a timeline: the chart is drawn
// under the finding whose fingerprint keys it, and the quotes fill the
// evidence appendix its positions link to.
func ExampleWrite_html() {
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	syn := model.Pos{File: "node1/capture.pcap", Frame: 812}
	rep := report.New(nil, nil, analyzer.Result{Findings: []analyzer.Finding{{
		Rule: "synack-reset", Fingerprint: "9c1e5a0b7d3f4e21", Severity: analyzer.Error,
		Title:    "kubelet probes reset: client port 31380 is an IPVS NodePort",
		Evidence: []analyzer.Evidence{{Pos: syn, Note: "SYN"}},
	}}})
	rep.Timelines = map[string]*report.Timeline{"9c1e5a0b7d3f4e21": {
		Title: "Connection attempts to 10.0.0.5:31380 by outcome", Start: start, End: start.Add(30 * time.Second),
		Lanes: []report.Lane{{Name: "10.244.1.7:8080", Events: []report.Event{
			{Time: start.Add(4 * time.Second), Kind: report.EventReset, Label: "SYN/ACK answered by client RST", Pos: syn},
		}}},
	}}
	rep.Quotes = []report.Quote{{Pos: syn, Text: "10.0.0.5.31380 > 10.244.1.7.8080: Flags [S]"}}
	var page strings.Builder
	if err := report.Write(&page, "html", rep); err != nil {
		panic(err)
	}
	for _, s := range []string{`<section class="finding" id="f-9c1e5a0b7d3f4e21"`, `<figure class="timeline"`, `<li id="q-1" class="quote">`, `Flags [S]`} {
		fmt.Println(strings.Contains(page.String(), s))
	}
	// Output:
	// true
	// true
	// true
	// true
}
