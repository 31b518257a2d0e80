package anon

import (
	"strings"
	"testing"
)

// Names that identify a network wherever they appear in text: DNS names,
// e-mail addresses, names that only start like a system component, MACs
// in every notation, IPv4 with leading zeros.
func TestTextNames(t *testing.T) {
	a := New("k")
	a.AddName("pod", "etcd-acmecorp-ledger")
	a.AddName("svc", "ingress-nginx-controller")
	host := func(n string) string { return a.nameToken("host", n) }
	ip := func(s string) string { return a.Text(s) }
	for _, tt := range []struct{ in, want string }{
		{"dial tcp: lookup api.acme-prod.corp.example: no such host",
			"dial tcp: lookup " + host("api.acme-prod.corp.example") + ": no such host"},
		{"Get https://vault.acme.com:8200/v1/sys", "Get https://" + host("vault.acme.com") + ":8200/v1/sys"},
		{"db1.prod.acme.co.uk answered", host("db1.prod.acme.co.uk") + " answered"},
		{"mail ops@acme-corp.com now", "mail " + a.nameToken("email", "ops@acme-corp.com") + " now"},
		{"Pod etcd-acmecorp-ledger is", "Pod etcd-" + a.token("pod", "acmecorp-ledger") + " is"},
		{"svc ingress-nginx-controller", "svc ingress-nginx-" + a.token("svc", "controller")},
		{"the lb-controller-conflict rule", "the lb-controller-conflict rule"},
		{"mac 0022.4da8.ba40 on", "mac " + dotted(a.MAC("00:22:4d:a8:ba:40")) + " on"},
		{"mac 00-22-4D-A8-BA-40 on", "mac " + strings.ReplaceAll(a.MAC("00:22:4d:a8:ba:40"), ":", "-") + " on"},
		{"from 010.001.002.003 to", "from " + ip("10.1.2.3") + " to"},
	} {
		if got := a.Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := a.Text("ops@acme-corp.com"); strings.Contains(got, "acme") {
		t.Errorf("an e-mail address leaks: %q", got)
	}
}

// What looks like a DNS name but is a file, a setting, a version, a
// public registry or the cluster's own domain is kept.
func TestTextKeepsNonNames(t *testing.T) {
	a := New("k")
	for _, s := range []string{
		"README.md", "run.sh", "kube-apiserver.yaml", "capture.pcap.gz", "iptables-save.txt",
		"net.ipv4.ip_forward = 1", "net.core.somaxconn = 4096", "net.netfilter.nf_conntrack_max",
		"image registry.k8s.io/pause:3.9", "kubernetes.default.svc.cluster.local", "v1.28.3",
		"factory.go:134", "quay.io/calico/node:v3.26.1", "k8s.io/client-go/informers",
		"coredns-5d78c9869d-x2x9q", "kube-proxy-7xk2p", "etcd-0", "spec.ports.port",
	} {
		if got := a.Text(s); got != s {
			t.Errorf("Text(%q) = %q, want it kept", s, got)
		}
	}
}
