package bundle

import "testing"

// A file outside every layout is tied to the host its name gives when
// that host's folder is beside it: a single-node layout's folder (a
// sosreport) for any file, a loose folder named like a host for a
// capture, which then ties the folder's files too.
func TestHostOfName(t *testing.T) {
	for _, c := range []struct {
		name  string
		paths []string
		want  map[string]string // file to node
	}{{
		name: "sosreport beside",
		paths: []string{"sosreport-node-a-2026-11-28-kqzfwta/sos_commands/networking/ip_-d_address",
			"node-a-eth0.pcap", "node-a.pcap", "tcpdump-node-a.pcap", "node-a_ens5.pcap.gz", "iptables-legacy-node-a.txt",
			"node-ab.pcap", "other.pcap", "x/node-a.pcap"},
		want: map[string]string{"node-a-eth0.pcap": "node-a", "node-a.pcap": "node-a", "tcpdump-node-a.pcap": "node-a",
			"node-a_ens5.pcap.gz": "node-a", "iptables-legacy-node-a.txt": "node-a", "node-ab.pcap": "", "other.pcap": "",
			"x/node-a.pcap": "", "sosreport-node-a-2026-11-28-kqzfwta/sos_commands/networking/ip_-d_address": "node-a"},
	}, {
		name: "longest host name wins",
		paths: []string{"sosreport-node-1-2026-11-28-aaaaaaa/sos_commands/x", "sosreport-node-10-2026-11-28-bbbbbbb/sos_commands/x",
			"node-10-eth0.pcap", "node-1-eth0.pcap"},
		want: map[string]string{"node-10-eth0.pcap": "node-10", "node-1-eth0.pcap": "node-1"},
	}, {
		name:  "loose host folder named by a capture",
		paths: []string{"worker-2/ip-addr.txt", "worker-2/sysctl.txt", "worker-2-eth0.pcap", "worker-3/ip-addr.txt"},
		want: map[string]string{"worker-2/ip-addr.txt": "worker-2", "worker-2-eth0.pcap": "worker-2",
			"worker-3/ip-addr.txt": ""},
	}, {
		name:  "loose host folder named by a command's output",
		paths: []string{"node-b/iptables-save.txt", "iptables-legacy-node-b.txt"},
		want:  map[string]string{"node-b/iptables-save.txt": "node-b", "iptables-legacy-node-b.txt": "node-b"},
	}, {
		name: "loose folder not a host",
		paths: []string{"logs/kubelet.log", "logs.pcap", "worker-2/ip-addr.txt", "worker-2-notes.txt",
			"kube-system/pods.json", "kube-system-pods.json"},
		want: map[string]string{"logs/kubelet.log": "", "logs.pcap": "", "worker-2/ip-addr.txt": "", "worker-2-notes.txt": "",
			"kube-system/pods.json": "", "kube-system-pods.json": ""},
	}} {
		t.Run(c.name, func(t *testing.T) {
			ix := newIndex()
			for _, p := range c.paths {
				ix.add(&entry{name: p, kind: entFile})
			}
			ls := detectLayouts(ix, "ticket", placement{})
			for p, want := range c.want {
				if got := ls.place(p).node; got != want {
					t.Errorf("%s: node %q, want %q", p, got, want)
				}
			}
		})
	}
}
