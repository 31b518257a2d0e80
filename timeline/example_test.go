package timeline_test

import (
	"context"
	"fmt"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/timeline"
)

// Build the timelines of a bundle's findings and quote their evidence, as
// the HTML report does.
func ExampleBuild() {
	ctx := context.Background()
	snap, _, err := parse.Open(ctx, "../fixtures/incidents/stale-dnat", &parse.Options{Summary: parse.Summary{Enabled: true}})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := analyzer.Run(ctx, snap, rules.All(), nil)
	timelines := timeline.Build(ctx, snap, res.Rules, res.Findings)
	for _, f := range res.Findings {
		tl := timelines[f.Fingerprint]
		if tl == nil {
			continue
		}
		fmt.Printf("%s: %s\n", f.Rule, tl.Title)
		for _, l := range tl.Lanes {
			fmt.Printf("  %s: %d events\n", l.Name, len(l.Events))
		}
		for _, m := range tl.Marks {
			fmt.Printf("  mark at %s: %s\n", m.Time.Format("15:04:05.000"), m.Label)
		}
	}
	for _, q := range timeline.Quotes(ctx, res.Findings, timelines) {
		if q.Pos.Frame > 0 {
			fmt.Printf("frame %d: %s\n", q.Pos.Frame, q.Text)
			break
		}
	}
	// Output:
	// kube-proxy-sync-errors: kube-proxy errors
	//   kube-proxy: 8 events
	// stale-dnat: Connection attempts to 10.244.2.7:53 by outcome against the first stale DNAT
	//   10.244.2.7:53: 8 events
	//   mark at 13:00:57.752: first stale DNAT: 10.10.0.5:62768 → 10.244.2.7:53 unanswered
	// syn-unanswered: Connection attempts to 10.244.2.7:53 by outcome
	//   10.244.2.7:53: 8 events
	// frame 5: 2026-11-23 13:00:57.752490 IP 10.10.0.5.62768 > 10.244.2.7.53: Flags [S], seq 1429426834, options [mss 1460], length 0
}
