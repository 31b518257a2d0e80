package main

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/netmortem/netmortem/dataplane"
	"github.com/netmortem/netmortem/model"
)

// The Service a probe goes to is found by its cluster IP and port, or by
// its NodePort on a node's own address; a DNAT target its Endpoints do
// not list is stale, and nothing is said without Endpoints.
func TestEndpointsForAndStale(t *testing.T) {
	svc := model.Service{Service: corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.5.5", Ports: []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}}}}}
	ep := model.Endpoints{Endpoints: corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.244.1.5"}}, Ports: []corev1.EndpointPort{{Name: "http", Port: 8080}}}}}}
	snap := &model.Snapshot{}
	snap.Kube.Services = []model.Service{svc}
	live := dataplane.Destination{Addr: "10.244.1.5:8080", Translated: true}
	gone := dataplane.Destination{Addr: "10.244.9.9:8080", Translated: true}
	probe := func(dst string, local bool) dataplane.Probe {
		return dataplane.Probe{Dst: netip.MustParseAddrPort(dst), Proto: "tcp", Local: local}
	}
	if se := endpointsFor(snap, probe("10.96.5.5:80", false)); se.name != "shop/web:http" || se.found || se.stale(gone) != "" {
		t.Errorf("without Endpoints: %+v, stale %q; want the Service found, nothing stale", se, se.stale(gone))
	}
	snap.Kube.Endpoints = []model.Endpoints{ep}
	for _, p := range []dataplane.Probe{probe("10.96.5.5:80", false), probe("192.168.1.10:30080", true)} {
		se := endpointsFor(snap, p)
		if se.stale(live) != "" || !strings.HasPrefix(se.stale(gone), "stale: not among the ready endpoints of shop/web:http") {
			t.Errorf("%v: live %q, gone %q", p.Dst, se.stale(live), se.stale(gone))
		}
	}
	for _, p := range []dataplane.Probe{probe("10.96.5.5:81", false), probe("192.168.1.10:30080", false), probe("10.96.5.6:80", false)} {
		if se := endpointsFor(snap, p); se.name != "" || se.stale(gone) != "" {
			t.Errorf("%v (local %v): Service %q found", p.Dst, p.Local, se.name)
		}
	}
}

func TestCommonDir(t *testing.T) {
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{"b/x/iptables-save.txt", "b/x/ipvsadm.txt"}, "b/x"},
		{[]string{"b/n1/iptables-save.txt", "b/n2/iptables-save.txt"}, "b"},
		{[]string{"/tmp/a/x", "/var/b/y"}, ""},
		{[]string{"x.txt"}, ""},
	} {
		if got := commonDir(c.files); got != c.want {
			t.Errorf("commonDir(%q) = %q, want %q", c.files, got, c.want)
		}
	}
}

// Two dumps of one node's table that end in the same destinations are
// walked once; the legacy and the nft tables of a node, or two nodes'
// tables, are not one table.
func TestMergeTraces(t *testing.T) {
	dst := []dataplane.Destination{{Addr: "10.244.1.5:8080", Probability: 1, Translated: true}}
	tr := func(file, format, backend, node string) natTrace {
		rs := &model.Ruleset{Node: node, Family: "ipv4", Format: format, Backend: backend, Pos: model.Pos{File: file}}
		return natTrace{rs: rs, tr: &dataplane.Trace{Hook: "PREROUTING", Destinations: dst}, group: traceGroup(rs)}
	}
	got := mergeTraces([]natTrace{tr("b/nat-L.txt", "iptables-list", "", ""), tr("b/save.txt", "iptables-save", "legacy", "")})
	if len(got) != 1 || got[0].rs.Pos.File != "b/save.txt" || len(got[0].same) != 1 || got[0].same[0] != "b/nat-L.txt" {
		t.Errorf("one node's two dumps: %+v", got)
	}
	for _, in := range [][]natTrace{
		{tr("b/legacy.txt", "iptables-save", "legacy", ""), tr("b/nft.txt", "iptables-save", "nft", "")},
		{tr("b/n1/save.txt", "iptables-save", "", ""), tr("b/n2/save.txt", "iptables-save", "", "")},
		{tr("b/all.txt", "iptables-save", "", "n1"), tr("b/all.txt", "iptables-save", "", "n2")},
	} {
		if got := mergeTraces(in); len(got) != 2 {
			t.Errorf("%s and %s merged", in[0].group, in[1].group)
		}
	}
}
