package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

const neighDir = "parse/testdata/neigh/"

// The count of a pasted ticket (the imroc guide's `arp -an | wc -l` on a
// node of 1200+) and the counts of make-sockets-neigh.sh's table.
func TestNeighCountsReal(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"fixtures/field/neigh-table-overflow--imroc-guide-arp-cache/arp-an.txt",
			[]string{"2 ipv4 1352 arp -an | wc -l"}},
		{neighDir + "neigh-count.txt",
			[]string{"2 ipv4 5 ip -4 neigh show nud all | wc -l", "4  5 ip neigh | wc -l"}},
	} {
		out := parsetest.ReadFile(t, c.file, NeighCounts)
		var got []string
		for _, n := range out {
			got = append(got, fmt.Sprintf("%d %s %d %s", n.Pos.Line, n.Family, n.Count, n.Command))
		}
		parsetest.CheckLines(t, c.file, got, c.want)
	}
}

// A count without its command, a second line under one command and a
// word are reported at their lines; the counts around them are kept.
func TestNeighCountsErrors(t *testing.T) {
	in := "7\n$ ip -6 neigh | wc -l\n12\n13\n$ arp -an | grep -c ether\nmany\n$ ip neigh | wc -l\n4\n"
	out, err := NeighCounts(strings.NewReader(in), "c.txt")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "c.txt:1 c.txt:4 c.txt:6" {
		t.Errorf("errors at %q: %v", got, err)
	}
	if len(out) != 2 || out[0].Family != "ipv6" || out[0].Count != 12 || out[1].Family != "" || out[1].Count != 4 || out[1].Pos.Line != 8 {
		t.Errorf("read %+v", out)
	}
}

func TestNeighCountCmd(t *testing.T) {
	for cmd, want := range map[string]string{
		"arp -an | wc -l":                            "ipv4",
		"ip -4 neigh show nud all | wc -l":           "ipv4",
		"ip -6 n | grep -c REACHABLE":                "ipv6",
		"ip neigh show dev eth0 | wc -l":             "",
		"sudo ip neighbour | grep -v FAILED | wc -l": "",
	} {
		if fam, ok := neighCountCmd(cmd); !ok || fam != want {
			t.Errorf("%q: %q %v, want %q", cmd, fam, ok, want)
		}
	}
	for _, cmd := range []string{"arp -an", "ip neigh", "ss -tan | wc -l", "ip route | wc -l", "wc -l"} {
		if _, ok := neighCountCmd(cmd); ok {
			t.Errorf("%q read as a count of a neighbor table", cmd)
		}
	}
}

func FuzzNeighCounts(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{neighDir + "neigh-count.txt", neighDir + "arp-an.txt"})
	f.Add("$ arp -an | wc -l\n1352\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NeighCounts(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, n := range out {
			if n.Pos.Line == 0 || n.Command == "" || n.Count < 0 {
				t.Fatalf("bad count: %+v", n)
			}
		}
	})
}
