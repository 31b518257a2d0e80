package report_test

import (
	"context"
	"os"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/rules"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/report"
)

// Write the findings of a bundle in the compact text form; "markdown",
// "json", "yaml", "sarif" and "table" work the same way.
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
