package host_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/parse"
	"github.com/netmortem/netmortem/parse/host"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

func TestSniffClient(t *testing.T) {
	own := []string{
		"parse/testdata/client/curl-v.txt",
		"parse/testdata/client/wget.txt",
		"parse/testdata/client/arping-two-macs.txt",
		"fixtures/field/filter-forward-drop--kubeadm-issue-139/curl.txt",
		"fixtures/field/ipvs-strict-arp--antrea-3785/curl.txt",
		"fixtures/field/vxlan-port-blocked--cloud-api-adaptor-issue-244/curl.txt",
		"fixtures/field/filter-forward-drop--kube-router-issue-316/dig.txt",
		"fixtures/field/vxlan-checksum-offload--flannel-issue-1279/ethtool-K-and-nslookup.txt",
	}
	others := append([]string{
		"parse/testdata/probes/nc-traditional-count.txt",
		"parse/testdata/probes/nc-openbsd-lines.txt",
		"fixtures/seeds/004-stale-dnat/nc-loop.txt",
		"parse/testdata/session/node-session.txt",
	}, parsetest.OtherHostOutputs...)
	parsetest.CheckSniff(t, parse.Formats(), host.ClientFormat, own, others)
}

// An application's bare error lines are a component's log cut down to its
// errors unless a client's command line shows they are a transcript.
func TestSniffClientBareLines(t *testing.T) {
	bare := []string{
		"fixtures/field/apiserver-unreachable--mlab-k8s-support-152/coredns.log",
		"fixtures/field/leaked-established-ports--capo-issue-3227/capo-controller-manager.log",
	}
	for _, file := range bare {
		head, err := os.ReadFile(filepath.Join(testutil.Root(), file))
		if err != nil {
			t.Fatal(err)
		}
		if sc := host.ClientFormat.Sniff("x", head); sc == 0 || sc >= 80 {
			t.Errorf("%s: client-transcript scores %d, want below net-error-lines' 80", file, sc)
		}
		if best := parsetest.SniffAs(t, parse.Formats(), file); best != "net-error-lines" {
			t.Errorf("%s: read as %q, want net-error-lines", file, best)
		}
	}
	for _, tc := range []struct {
		text string
		want string
	}{
		{"dial tcp 10.96.0.1:443: connect: connection refused\n", "net-error-lines"},
		{"$ kubectl logs coredns-abc\ndial tcp 10.96.0.1:443: i/o timeout\n", "net-error-lines"},
		{"$ kubectl exec app -- curl-probe\ndial tcp 10.96.0.1:443: i/o timeout\n", "net-error-lines"},
		{"$ kubectl exec app -- wget -qO- http://10.96.0.1/\ndial tcp 10.96.0.1:80: i/o timeout\n", "client-transcript"},
		{"/ # nc -zv 10.96.0.1 443\ndial tcp 10.96.0.1:443: connect: no route to host\n", "client-transcript"},
		{"lookup web.default on 10.96.0.10:53: no such host\n", "client-transcript"},
	} {
		if best, sc := parsetest.Best(parse.Formats(), "x", []byte(tc.text)); best != tc.want {
			t.Errorf("%q: read as %q (%d), want %s", tc.text, best, sc, tc.want)
		}
	}
}
