package bundle

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/netmortem/netmortem/capture"
)

// seriesStem takes out each run of digits, as tcpdump -C and -G's
// counters and times are, those at the end, and a compressor's suffix.
func TestSeriesStem(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"trace.pcap", "trace.pcap"},
		{"trace.pcap1", "trace.pcap"},
		{"trace.pcap12", "trace.pcap"},
		{"handshakes-131143.pcap", "handshakes-#.pcap"},
		{"node1-eth0.pcap", "node#-eth#.pcap"},
		{"2026-11-29_10:00:00.pcap.gz", "#-#-#_#:#:#.pcap"},
		{"eth0-20261129-1000.pcap", "eth#-#-#.pcap"},
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

// captureName keeps the numbers right after a letter but those that end a
// name: an interface's or a node's, or a time's written after a letter.
func TestCaptureName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"eth0-20261129-1000.pcap", "h0|"},
		{"eth0.pcap", "h0|"},
		{"eth0.pcap1", "h0|"},
		{"eth0.pcap1.gz", "h0|"},
		{"node1-ens33_00001.pcap", "e1|s33|"},
		{"trace.pcap12", ""},
		{"trace_2026-11-29T10:59:54.pcap", "T10|"},
		{"handshakes-131143.pcap", ""},
	} {
		if got := captureName(filepath.Join("d", c.in)); got != c.want {
			t.Errorf("captureName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// splitGroup splits a group by captureName only where the files' times
// interleave, and then by kind.
func TestSplitGroup(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 10, 59, 50, 0, time.UTC)
	at := func(name string, s float64, link string) groupFile {
		return groupFile{heldCapture{name: name}, capture.Head{Format: "pcap", LinkType: link, First: t0.Add(time.Duration(s * float64(time.Second)))}}
	}
	names := func(parts [][]groupFile) (out [][]string) {
		for _, p := range parts {
			var l []string
			for _, f := range p {
				l = append(l, f.name)
			}
			out = append(out, l)
		}
		return out
	}
	for _, c := range []struct {
		name  string
		files []groupFile
		want  [][]string
	}{
		{"two interfaces side by side", []groupFile{at("eth0-1", 0, "E"), at("eth1-1", 0.5, "E"), at("eth0-2", 1, "E"), at("eth1-2", 1.5, "E")},
			[][]string{{"eth0-1", "eth0-2"}, {"eth1-1", "eth1-2"}}},
		{"tcpdump -C on two interfaces", []groupFile{at("eth0.pcap", 0, "E"), at("eth1.pcap", 0.2, "E"), at("eth0.pcap1", 3, "E"), at("eth1.pcap1", 3.2, "E")},
			[][]string{{"eth0.pcap", "eth0.pcap1"}, {"eth1.pcap", "eth1.pcap1"}}},
		{"an ISO time across an hour", []groupFile{at("t_T10:59:58", 8, "E"), at("t_T10:59:59", 9, "E"), at("t_T11:00:00", 10, "E"), at("t_T11:00:01", 11, "E")},
			[][]string{{"t_T10:59:58", "t_T10:59:59", "t_T11:00:00", "t_T11:00:01"}}},
		{"seconds after a letter", []groupFile{at("m59s54", 0, "E"), at("m59s55", 1, "E"), at("m0s54", 60, "E"), at("m0s55", 61, "E")},
			[][]string{{"m59s54", "m59s55", "m0s54", "m0s55"}}},
		{"a file of another link type amid", []groupFile{at("t-1", 0, "E"), at("t-2", 1, "SLL2"), at("t-3", 2, "E")},
			[][]string{{"t-1", "t-3"}, {"t-2"}}},
	} {
		if got := names(splitGroup(c.files)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
