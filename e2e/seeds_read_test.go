package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse"
)

// TestSeedTablesAndLogs: every kubectl table and log of the seed bundles is
// read as its format, with the records it holds, and the scrape artifact
// of 003's nginx error log is a positioned warning.
func TestSeedTablesAndLogs(t *testing.T) {
	want := map[string]struct {
		format  string
		records int
	}{
		"000-apiserver-affinity/cs.txt":                           {"kubectl-table", 5},
		"001-probe-restart-loop/nodes.txt":                        {"kubectl-table", 4},
		"001-probe-restart-loop/pods.txt":                         {"kubectl-table", 5},
		"001-probe-restart-loop/etcd.log":                         {"etcd-log", 2},
		"001-probe-restart-loop/kubelet.log":                      {"klog", 1},
		"002-synack-reset/svc.txt":                                {"kubectl-table", 8},
		"002-synack-reset/kubelet.log":                            {"klog", 1},
		"002-synack-reset/nginx-access.log":                       {"nginx-access", 4},
		"003-lb-controller-conflict/ingress.txt":                  {"kubectl-table", 3},
		"003-lb-controller-conflict/nginx-error.log":              {"nginx-error", 5},
		"003-lb-controller-conflict/ingress-nginx-controller.log": {"klog", 3},
		"003-lb-controller-conflict/metallb-controller.log":       {"json-log", 6},
		"004-stale-dnat/svc-kube-dns.txt":                         {"kubectl-table", 1},
		"004-stale-dnat/endpoints-count.txt":                      {"kubectl-table", 1},
		"004-stale-dnat/kube-proxy.log":                           {"klog", 3},
		"003-lb-controller-conflict/kube-vip-settings.yml":        {"kubespray-vars", 13},
		"004-stale-dnat/nc-loop.txt":                              {"connect-loop", 1},
	}
	root := filepath.Join("..", "fixtures", "seeds")
	snap, warns, err := parse.Open(context.Background(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, in := range snap.Inputs {
		rel, _ := filepath.Rel(root, in.Path)
		rel = filepath.ToSlash(rel)
		w, ok := want[rel]
		if !ok {
			continue
		}
		seen[rel] = true
		if in.Format != w.format || in.Records != w.records {
			t.Errorf("%s: read as %q with %d records (skipped %q), want %q with %d", rel, in.Format, in.Records, in.Skipped, w.format, w.records)
		}
	}
	for rel := range want {
		if !seen[rel] {
			t.Errorf("%s: not among the inputs", rel)
		}
	}
	artifact := 0
	for _, w := range warns {
		if strings.HasSuffix(w.Pos.File, "nginx-error.log") {
			artifact++
			if w.Pos.Line != 1 || !strings.Contains(w.Error(), `"33" before the timestamp`) {
				t.Errorf("nginx-error.log warning %v", w)
			}
		}
	}
	if artifact != 1 {
		t.Errorf("%d warnings for nginx-error.log, want 1: %v", artifact, warns)
	}
	if n := len(snap.Kube.NodePorts()); n != 13 {
		t.Errorf("%d NodePorts from svc.txt, want 13", n)
	}
}
