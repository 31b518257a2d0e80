package netmortem_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/netmortem/netmortem"
	"github.com/netmortem/netmortem/report"
)

// Analyze a bundle as `netmortem analyze` does, and write the report in
// one of report.Write's formats: "table", "text", "json", "yaml",
// "markdown", "sarif" or "html" (with its timelines).
func ExampleAnalyze() {
	ctx := context.Background()
	rep, err := netmortem.Analyze(ctx, netmortem.Paths("fixtures/seeds/001-probe-restart-loop"), &netmortem.Options{
		Enable: []string{"version-skew"},
	})
	if err != nil {
		panic(err) // an option that cannot be used: nothing was read
	}
	if err := report.Write(os.Stdout, "text", rep); err != nil {
		panic(err)
	}
	fmt.Println("incomplete:", len(rep.Incomplete) > 0)
	// Output:
	// fixtures/seeds/001-probe-restart-loop/nodes.txt:6:0: warning: version-skew: kubelet versions differ: antidote-worker-gt5t (v1.11.3) against v1.12 on the other nodes (cause likely) [Node antidote-worker-gt5t: node antidote-worker-gt5t runs kubelet v1.11.3]
	// incomplete: false
}

// A path that cannot be read, or a capture whose header cannot be, is no
// error: the report covers what was read and Incomplete says what was
// not, as the CLI's exit code 3 does.
func ExampleAnalyze_incomplete() {
	rep, err := netmortem.Analyze(context.Background(), netmortem.Paths("fixtures/seeds/001-probe-restart-loop", "missing.tar.gz"), nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Incomplete)
	// Output:
	// [missing.tar.gz: no such file or directory]
}

// Read evidence that is not a file: a reader is read as one file of its
// name (a capture, a command output, kubectl JSON, an archive).
func ExampleReader() {
	sysctl := strings.NewReader("net.ipv4.ip_local_port_range = 30000 60999\n")
	rep, err := netmortem.Analyze(context.Background(), []netmortem.Operand{netmortem.Reader("node1/sysctl.txt", sysctl)}, nil)
	if err != nil {
		panic(err)
	}
	for _, in := range rep.Inputs {
		fmt.Println(in.Path, in.Format, in.Records)
	}
	for _, f := range rep.Findings {
		fmt.Println(f.Rule)
	}
	// Output:
	// node1/sysctl.txt sysctl 1
	// ephemeral-nodeport-overlap
}
