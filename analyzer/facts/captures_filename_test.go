package facts_test

import (
	"strings"
	"testing"

	"github.com/netmortem/netmortem/analyzer/facts"
)

// A capture outside the nodes' folders is tied to the node its file name
// names as a whole word: tcpdump-worker-1.pcap is worker-1's, and the
// rulesets in the nodes' folders keep the layout's nodes.
func TestCaptureNodeFromFileName(t *testing.T) {
	fs := open(t, "analyzer/rules/testdata/connection-skew/miss-node-from-file-name")
	x := facts.CaptureNodes.Get(fs)
	var found bool
	for _, f := range x.Files() {
		if !strings.HasSuffix(f, "tcpdump-worker-1.pcap") {
			continue
		}
		found = true
		cn, ok := x.Of(f)
		if !ok || cn.Node != "worker-1" || cn.How != facts.NodeFromFileName {
			t.Errorf("%s: node %+v (known %v), want worker-1 from its file name", f, cn, ok)
		}
	}
	if !found {
		t.Fatalf("no capture tcpdump-worker-1.pcap among %v", x.Files())
	}
}
