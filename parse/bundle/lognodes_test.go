package bundle

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/netmortem/netmortem/model"
)

// Each log line tied to no node takes the node its file's own lines name:
// kube-proxy's node IP in its text and structured forms, the node name of
// kube-proxy's node lookup and of the kubelet's registration; an address
// no node has ties nothing, and a file naming two nodes is cut where the
// second claim starts.
func TestTieLogsToNodes(t *testing.T) {
	ev := func(file string, line int, msg string, fields ...string) model.LogEvent {
		le := model.LogEvent{Message: msg, Pos: model.Pos{File: file, Line: line}, Fields: map[string]string{}}
		for i := 0; i+1 < len(fields); i += 2 {
			le.Fields[fields[i]] = fields[i+1]
		}
		return le
	}
	node := func(name, ip string) model.Node {
		n := model.Node{}
		n.Name = name
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
		return n
	}
	s := &model.Snapshot{
		Kube:  model.Kube{Nodes: []model.Node{node("worker-1", "192.168.121.74"), node("worker-2", "10.0.0.233")}},
		Addrs: []model.IfAddr{{Node: "worker-3", Dev: "eth0", Prefix: netip.MustParsePrefix("172.18.0.2/16")}},
		Logs: []model.LogEvent{
			ev("a.log", 1, "Using iptables proxy"),
			ev("a.log", 2, "Successfully retrieved node IP(s)", "IPs", `["192.168.121.74"]`),
			ev("b.log", 1, "Successfully retrieved node IP: 10.0.0.233"),
			ev("b.log", 2, "Using ipvs Proxier"),
			ev("c.log", 1, "Detected node IP", "address", "172.18.0.2"),
			ev("d.log", 1, `Failed to retrieve node info: Get "https://172.18.0.1:6443/api/v1/nodes/laptop": dial tcp 172.18.0.1:6443: connect: connection refused`),
			ev("e.log", 1, "Attempting to register node", "node", "debian10x64"),
			ev("f.log", 1, "Successfully retrieved node IP: 10.9.9.9"),
			ev("g.log", 1, "Successfully retrieved node IP: 10.0.0.233"),
			ev("g.log", 2, "Syncing iptables rules"),
			ev("g.log", 3, "Successfully retrieved node IP(s)", "IPs", `["192.168.121.74"]`),
			ev("g.log", 4, "Syncing iptables rules"),
		},
		Inputs: []model.Input{{Path: "a.log"}, {Path: "g.log"}},
	}
	tieLogsToNodes(s)
	want := []string{"worker-1", "worker-1", "worker-2", "worker-2", "worker-3", "laptop", "debian10x64", "",
		"worker-2", "worker-2", "worker-1", "worker-1"}
	for i, le := range s.Logs {
		if le.Node != want[i] {
			t.Errorf("%s:%d %q: node %q, want %q", le.Pos.File, le.Pos.Line, le.Message, le.Node, want[i])
		}
	}
	if s.Inputs[0].Node != "worker-1" || s.Inputs[1].Node != "" {
		t.Errorf("inputs tied to %q and %q, want worker-1 and none (two nodes)", s.Inputs[0].Node, s.Inputs[1].Node)
	}
}
