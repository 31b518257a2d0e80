package logs_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// grep -Hn of a kube-proxy log (kubernetes#35641) and the errors helm,
// kubectl and kubeadm printed in field tickets, among all the formats; and
// field logs that are plain klog or journal lines.
func TestSniffGrepLog(t *testing.T) {
	for file, want := range map[string]string{
		"fixtures/field/nodeport-collision--k8s-35641/kube-proxy.log":                "grep-n-log",
		"fixtures/field/kube-proxy-sync-errors--k8s-the-hard-way-173/kube-proxy.log": "klog",
		"fixtures/field/hairpin-drop--k8s-23322/kubelet.log":                         "klog",
	} {
		head, err := os.ReadFile(filepath.Join(testutil.Root(), file))
		if err != nil {
			t.Fatal(err)
		}
		if best, _ := parsetest.Best(parse.Formats(), filepath.Base(file), head); best != want {
			t.Errorf("%s read as %q, want %q", file, best, want)
		}
	}
}
