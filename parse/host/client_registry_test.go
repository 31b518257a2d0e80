package host_test

import (
	"testing"

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
		"fixtures/field/apiserver-unreachable--mlab-k8s-support-152/coredns.log",
	}
	others := append([]string{
		"parse/testdata/probes/nc-traditional-count.txt",
		"parse/testdata/probes/nc-openbsd-lines.txt",
		"fixtures/seeds/004-stale-dnat/nc-loop.txt",
		"parse/testdata/session/node-session.txt",
	}, parsetest.OtherHostOutputs...)
	parsetest.CheckSniff(t, parse.Formats(), host.ClientFormat, own, others)
}
