package bundle

import (
	"path/filepath"
	"reflect"
	"slices"
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

// nameNumbers keeps the numbers right after a letter inside a word, but
// those that end a name: an interface's or a node's, or a day's, an
// epoch's or a time's written inside a word.
func TestNameNumbers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"eth0-20261129-1000.pcap", []string{"0"}},
		{"eth0.pcap", []string{"0"}},
		{"eth0.pcap1", []string{"0"}},
		{"eth0.pcap1.gz", []string{"0"}},
		{"node1-ens33_00001.pcap", []string{"1", "33"}},
		{"trace.pcap12", nil},
		{"eth0-20261129T102144.pcap", []string{"0", "102144"}},
		{"trace-T10:59:54.pcap", nil},
		{"enp0s3-1000.pcap", []string{"0", "3"}},
		{"ens1f0.pcap1", []string{"1", "0"}},
		{"10h59m54s.pcap", []string{"59", "54"}},
		{"cap-Nov29-1000.pcap", []string{"29"}},
		{"cap1764410000.pcap1", []string{"1764410000"}},
	} {
		if got := nameNumbers(filepath.Join("d", c.in)); !slices.Equal(got, c.want) {
			t.Errorf("nameNumbers(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// splitGroup splits a group by the numbers of its names whose files
// interleave in time, and then by kind.
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
		{"a day across midnight on two interfaces", []groupFile{at("eth0-Nov29-2359", 0, "E"), at("eth1-Nov29-2359", 0.5, "E"),
			at("eth0-Nov30-0000", 1, "E"), at("eth1-Nov30-0000", 1.5, "E")},
			[][]string{{"eth0-Nov29-2359", "eth0-Nov30-0000"}, {"eth1-Nov29-2359", "eth1-Nov30-0000"}}},
		{"an ISO time on two interfaces", []groupFile{at("eth0-T105958", 0, "E"), at("eth1-T105958", 0.5, "E"), at("eth0-T105959", 1, "E"), at("eth1-T105959", 1.5, "E")},
			[][]string{{"eth0-T105958", "eth0-T105959"}, {"eth1-T105958", "eth1-T105959"}}},
		{"systemd's interface names", []groupFile{at("enp0s3-1", 0, "E"), at("enp0s8-1", 0.5, "E"), at("enp0s3-2", 1, "E"), at("enp0s8-2", 1.5, "E")},
			[][]string{{"enp0s3-1", "enp0s3-2"}, {"enp0s8-1", "enp0s8-2"}}},
		{"a time inside a word", []groupFile{at("t10h59m58s.pcap", 0, "E"), at("t10h59m59s.pcap", 1, "E"), at("t11h0m0s.pcap", 2, "E"), at("t11h0m1s.pcap", 3, "E")},
			[][]string{{"t10h59m58s.pcap", "t10h59m59s.pcap", "t11h0m0s.pcap", "t11h0m1s.pcap"}}},
		{"a quiet interface of one file", []groupFile{at("eth0-1", 0, "E"), at("eth0-2", 1, "E"), at("eth1-2", 1.5, "E"), at("eth0-3", 2, "E")},
			[][]string{{"eth0-1", "eth0-2", "eth0-3"}, {"eth1-2"}}},
		{"an epoch after a word, with -C", []groupFile{at("cap1000.pcap", 0, "E"), at("cap1000.pcap1", 1, "E"), at("cap1010.pcap", 10, "E"), at("cap1010.pcap1", 11, "E")},
			[][]string{{"cap1000.pcap", "cap1000.pcap1", "cap1010.pcap", "cap1010.pcap1"}}},
		{"a file of another link type amid", []groupFile{at("t-1", 0, "E"), at("t-2", 1, "SLL2"), at("t-3", 2, "E")},
			[][]string{{"t-1", "t-3"}, {"t-2"}}},
	} {
		if got := names(splitGroup(c.files)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
