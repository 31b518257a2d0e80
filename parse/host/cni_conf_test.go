package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// The CNI configurations nodes carry, as `cat` prints them:
// kubernetes/kubernetes#128723's bridge .conf (its host-local subnet),
// flannel's conflist as kube-flannel.yml writes it (cni-conf.json, a
// delegate), Calico's 10-calico.conflist as its installer writes it, and
// containerd's 10-containerd-net.conflist (host-local ranges, IPv4 and
// IPv6), under one prompt each.
const cniConfs = `$ cat /etc/cni/net.d/10-bridge.conflist
{
  "cniVersion": "1.0.0",
  "name": "bridge",
  "type": "bridge",
  "bridge": "k8s",
  "isDefaultGateway": true,
  "ipMasq": true,
  "ipam": {
    "type": "host-local",
    "subnet": "10.96.0.0/16"
  }
}
$ cat /etc/cni/net.d/10-flannel.conflist
{
  "name": "cbr0",
  "cniVersion": "0.3.1",
  "plugins": [
    {
      "type": "flannel",
      "delegate": {
        "hairpinMode": true,
        "isDefaultGateway": true
      }
    },
    {
      "type": "portmap",
      "capabilities": {
        "portMappings": true
      }
    }
  ]
}
$ cat /etc/cni/net.d/10-calico.conflist
{
  "name": "k8s-pod-network",
  "cniVersion": "0.3.1",
  "plugins": [
    {
      "type": "calico",
      "log_level": "info",
      "datastore_type": "kubernetes",
      "nodename": "node1",
      "mtu": 1440,
      "ipam": {
          "type": "calico-ipam"
      },
      "policy": {
          "type": "k8s"
      },
      "kubernetes": {
          "kubeconfig": "/etc/cni/net.d/calico-kubeconfig"
      }
    },
    {
      "type": "portmap",
      "snat": true,
      "capabilities": {"portMappings": true}
    }
  ]
}
$ cat /etc/cni/net.d/10-containerd-net.conflist
{
  "cniVersion": "1.0.0",
  "name": "containerd-net",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": true,
      "promiscMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [
          [{
            "subnet": "10.88.0.0/16"
          }],
          [{
            "subnet": "2001:4860:4860::/64"
          }]
        ],
        "routes": [
          { "dst": "0.0.0.0/0" },
          { "dst": "::/0" }
        ]
      }
    },
    {
      "type": "portmap",
      "capabilities": {"portMappings": true}
    }
  ]
}
`

func cniLines(out []model.Setting) []string {
	var got []string
	for _, s := range out {
		got = append(got, fmt.Sprintf("%d %s %s=%s", s.Pos.Line, s.Tool, s.Key, s.Value))
	}
	return got
}

func TestCNIConf(t *testing.T) {
	if s := sniffCNIConf("x", []byte(cniConfs)); s != 95 {
		t.Errorf("sniff %d", s)
	}
	out, err := CNIConf(strings.NewReader(cniConfs), "cni.txt")
	if err != nil {
		t.Fatal(err)
	}
	parsetest.CheckLines(t, "cni.txt", cniLines(out), []string{
		"4 cni name=bridge",
		"3 cni cniVersion=1.0.0",
		"5 cni bridge.type=bridge",
		"6 cni bridge.bridge=k8s",
		"10 cni bridge.ipam.type=host-local",
		"11 cni bridge.ipam.subnet=10.96.0.0/16",
		"16 cni name=cbr0",
		"17 cni cniVersion=0.3.1",
		"20 cni flannel.type=flannel",
		"27 cni portmap.type=portmap",
		"36 cni name=k8s-pod-network",
		"37 cni cniVersion=0.3.1",
		"40 cni calico.type=calico",
		"44 cni calico.mtu=1440",
		"46 cni calico.ipam.type=calico-ipam",
		"56 cni portmap.type=portmap",
		"65 cni name=containerd-net",
		"64 cni cniVersion=1.0.0",
		"68 cni bridge.type=bridge",
		"69 cni bridge.bridge=cni0",
		"74 cni bridge.ipam.type=host-local",
		"77 cni bridge.ipam.subnet=10.88.0.0/16",
		"80 cni bridge.ipam.subnet=2001:4860:4860::/64",
		"90 cni portmap.type=portmap",
	})
}

// Broken JSON is reported at its line and the next configuration read; a
// Kubernetes object, or JSON of no CNI shape, is not claimed.
func TestCNIConfErrors(t *testing.T) {
	in := "{\n  \"cniVersion\": \"0.3.1\",\n  \"type\": \"bridge\",\n  \"ipam\": {\"subnet\": 10.1}}\n}\n" +
		"{\n  \"cniVersion\": \"0.4.0\",\n  \"name\": \"x\",\n  \"type\": \"ptp\"\n}\n{\n  \"cniVersion\": \"0.4.0\",\n"
	out, err := CNIConf(strings.NewReader(in), "bad.conf")
	parsetest.CheckLines(t, "bad.conf", cniLines(out), []string{"8 cni name=x", "7 cni cniVersion=0.4.0", "9 cni ptp.type=ptp"})
	var at []string
	if l, ok := err.(model.ErrorList); ok {
		for _, e := range l {
			at = append(at, e.Pos.String())
		}
	}
	if strings.Join(at, " ") != "bad.conf:4 bad.conf:11" {
		t.Errorf("errors at %v (%v), want bad.conf:4 and bad.conf:11", at, err)
	}
	for _, s := range []string{`{"apiVersion": "v1", "kind": "ConfigMap", "data": {"cni-conf.json": "{\"cniVersion\": \"0.3.1\", \"type\": \"flannel\"}"}}`,
		`{"name": "x", "type": "bridge"}`, "cniVersion: 0.3.1\ntype: bridge\n"} {
		if got := sniffCNIConf("x", []byte(s)); got != 0 {
			t.Errorf("sniff %q: %d", s, got)
		}
	}
}

func FuzzCNIConf(f *testing.F) {
	f.Add(cniConfs)
	f.Add("{\"cniVersion\": \"1\", \"plugins\": [{\"type\": \"a\", \"delegate\": {\"type\": \"b\", \"ipam\": {\"ranges\": [[{\"subnet\": \"x\"}]]}}}]}\n{\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := CNIConf(strings.NewReader(in), "fuzz.conf")
		parsetest.CheckFuzzErrors(t, err, "fuzz.conf")
		for _, s := range out {
			if s.Pos.Line == 0 || s.Key == "" || s.Tool != "cni" {
				t.Fatalf("bad record: %+v", s)
			}
		}
		sniffCNIConf("fuzz.conf", []byte(in))
	})
}
