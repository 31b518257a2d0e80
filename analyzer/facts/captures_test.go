package facts_test

import (
	"context"
	"net/netip"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/netmortem/netmortem/analyzer"
	"github.com/netmortem/netmortem/analyzer/facts"
	"github.com/netmortem/netmortem/internal/testutil"
	"github.com/netmortem/netmortem/model"
	"github.com/netmortem/netmortem/parse"
)

func TestCaptureNodeFromBundle(t *testing.T) {
	path := filepath.Join(testutil.Root(), "fixtures/captures/sweep.pcap")
	snap, _, err := parse.Open(context.Background(), path, &parse.Options{Node: "worker-2"})
	if err != nil {
		t.Fatal(err)
	}
	x := facts.CaptureNodes.Get(analyzer.NewFactSet(snap))
	if files := x.Files(); len(files) != 1 || files[0] != path {
		t.Fatalf("files %v", files)
	}
	if cn, ok := x.Of(path); !ok || cn.Node != "worker-2" || cn.How != facts.NodeFromBundle {
		t.Errorf("node %+v, %v", cn, ok)
	}
	// Without a node, the capture's traffic alone does not tell it.
	snap, _, _ = parse.Open(context.Background(), path, nil)
	if cn, ok := facts.CaptureNodes.Get(analyzer.NewFactSet(snap)).Of(path); ok {
		t.Errorf("node %+v from a capture alone", cn)
	}
}

func TestCaptureNodeFromAddresses(t *testing.T) {
	attempt := func(file, client, server string) model.Attempt {
		return model.Attempt{Pos: model.Pos{File: file, Frame: 1}, Client: netip.MustParseAddrPort(client), Server: netip.MustParseAddrPort(server)}
	}
	ifaddr := func(node, dev, prefix string, line int) model.IfAddr {
		return model.IfAddr{Node: node, Dev: dev, Prefix: netip.MustParsePrefix(prefix), Pos: model.Pos{File: node + "/ip-addr.txt", Line: line}}
	}
	node := func(name, ip string) model.Node {
		n := model.Node{}
		n.Name = name
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
		n.Source.Pos = model.Pos{File: "nodes.json", Line: 1}
		return n
	}
	s := &model.Snapshot{
		Addrs: []model.IfAddr{
			ifaddr("node1", "lo", "127.0.0.1/8", 2), ifaddr("node2", "lo", "127.0.0.1/8", 2),
			ifaddr("node1", "eth0", "10.0.0.11/24", 5), ifaddr("node2", "eth0", "10.0.0.12/24", 5),
			// The Service IPs every node binds in IPVS mode tell nothing.
			ifaddr("node1", "kube-ipvs0", "10.96.0.1/32", 9), ifaddr("node2", "kube-ipvs0", "10.96.0.1/32", 9),
		},
		Attempts: []model.Attempt{
			attempt("a.pcap", "10.0.0.11:40000", "10.96.0.1:443"),   // node1's own address
			attempt("b.pcap", "127.0.0.1:40000", "10.96.0.1:443"),   // nothing of one node
			attempt("c.pcap", "10.0.0.11:40000", "10.0.0.12:10250"), // both nodes
			attempt("d.pcap", "10.0.5.5:40000", "10.0.0.13:10250"),  // a Node without ip addr output
		},
	}
	s.Kube.Nodes = []model.Node{node("node1", "10.0.0.11"), node("node3", "10.0.0.13")}
	x := facts.CaptureNodes.Get(analyzer.NewFactSet(s))
	cn, ok := x.Of("a.pcap")
	if !ok || cn.Node != "node1" || cn.How != facts.NodeFromAddresses || len(cn.Evidence) != 1 ||
		cn.Evidence[0].String() != "node1/ip-addr.txt:5 (10.0.0.11 is on eth0 of node node1)" {
		t.Errorf("a.pcap: %+v %v", cn, ok)
	}
	for _, f := range []string{"b.pcap", "c.pcap"} {
		if cn, ok := x.Of(f); ok {
			t.Errorf("%s: %+v", f, cn)
		}
	}
	cn, ok = x.Of("d.pcap")
	if !ok || cn.Node != "node3" || cn.How != facts.NodeFromTraffic || cn.Evidence[0].String() != "nodes.json:1 (Node node3) (10.0.0.13 is the InternalIP of Node node3)" {
		t.Errorf("d.pcap: %+v %v", cn, ok)
	}
}
