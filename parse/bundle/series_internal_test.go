package bundle

import (
	"path/filepath"
	"testing"
)

// seriesStem takes out each run of digits, as tcpdump -C and -G's
// counters and times are, and those at the end, but for a run right
// after a letter and before the last (an interface's or a node's number),
// and a compressor's suffix.
func TestSeriesStem(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"trace.pcap", "trace.pcap"},
		{"trace.pcap1", "trace.pcap"},
		{"trace.pcap12", "trace.pcap"},
		{"handshakes-131143.pcap", "handshakes-#.pcap"},
		{"node1-eth0.pcap", "node1-eth#.pcap"},
		{"2026-11-29_10:00:00.pcap.gz", "#-#-#_#:#:#.pcap"},
		{"eth0-20261129-1000.pcap", "eth0-#-#.pcap"},
		{"ens33_00001_20261129.pcap", "ens33_#_#.pcap"},
		{"capture1.pcap", "capture#.pcap"},
		{"trace.pcap3.gz", "trace.pcap"},
		{"TRACE.PCAP2.GZ", "TRACE.PCAP"},
		{"trace.pcap.zst", "trace.pcap"},
		{"123", ""},
		{"ä1b", "ä#b"},
	} {
		in := filepath.Join("d", c.in)
		if got, want := seriesStem(in), filepath.Join("d", c.want); got != want {
			t.Errorf("seriesStem(%q) = %q, want %q", in, got, want)
		}
	}
}
