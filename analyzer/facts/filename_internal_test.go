package facts

import "testing"

func TestNodeInFileName(t *testing.T) {
	nodes := []string{"worker-2", "worker-20", "cp-1"}
	for _, c := range []struct{ file, want string }{
		{"bundle/tcpdump-worker-2.pcap", "worker-2"},
		{"worker-20_eth0.pcap", "worker-20"},
		{"capture-worker-200.pcap", ""},
		{"cp-1-and-worker-2.pcap", ""}, // two nodes named
		{"dump.pcap", ""},
	} {
		if got := nodeInFileName(c.file, nodes); got != c.want {
			t.Errorf("%s: %q, want %q", c.file, got, c.want)
		}
	}
}
