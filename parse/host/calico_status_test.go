package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// projectcalico/calico#2561's table: one peer down, its info wrapped onto
// the row below.
func TestCalicoStatusWrapped(t *testing.T) {
	in := "$ sudo ./calicoctl node status\nCalico process is running.\n\nIPv4 BGP status\n" +
		"+--------------+-------------------+-------+----------+--------------------------------+\n" +
		"| PEER ADDRESS |     PEER TYPE     | STATE |  SINCE   |              INFO              |\n" +
		"+--------------+-------------------+-------+----------+--------------------------------+\n" +
		"| 10.0.0.11    | node-to-node mesh | start | 16:57:43 | Active Socket: Connection      |\n" +
		"|              |                   |       |          | reset by peer                  |\n" +
		"+--------------+-------------------+-------+----------+--------------------------------+\n"
	if s := sniffCalicoStatus("x", []byte(in)); s != 95 {
		t.Errorf("sniff %d", s)
	}
	out, err := CalicoStatus(strings.NewReader(in), "s.txt")
	if err != nil || len(out) != 1 {
		t.Fatalf("%v: %+v", err, out)
	}
	got := fmt.Sprintf("%d %s %s %s %s %s %q", out[0].Pos.Line, out[0].Family, out[0].Peer, out[0].Type, out[0].State,
		out[0].Since, out[0].Info)
	if want := `8 IPv4 10.0.0.11 node-to-node mesh start 16:57:43 "Active Socket: Connection reset by peer"`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// Both families' tables, in calicoctl's format: peers up and down, a
// wrapped cell, "No IPv6 peers found."; a row with no address is reported
// at its line and the rest read.
func TestCalicoStatusTables(t *testing.T) {
	in := "[vagrant@k8s-master ~]$ sudo calicoctl node status\nCalico process is running.\n\nIPv4 BGP status\n" +
		"+---------------+-------------------+-------+----------+--------------------------------+\n" +
		"| PEER ADDRESS  |     PEER TYPE     | STATE |  SINCE   |              INFO              |\n" +
		"+---------------+-------------------+-------+----------+--------------------------------+\n" +
		"| 192.168.50.21 | global            | start | 00:10:03 | Active Socket: Connection      |\n" +
		"|               |                   |       |          | refused                        |\n" +
		"| 192.168.50.23 | node-to-node mesh | up    | 00:16:11 | Established                    |\n" +
		"| ${host_ip1}   | node-to-node mesh | up    | 00:16:11 | Established                    |\n" +
		"+---------------+-------------------+-------+----------+--------------------------------+\n\n" +
		"IPv6 BGP status\n" +
		"+--------------+-------------------+-------+----------+-------------+\n" +
		"| fd00::2      | node-to-node mesh | up    | 00:16:11 | Established |\n" +
		"+--------------+-------------------+-------+----------+-------------+\nNo IPv6 peers found.\n"
	out, err := CalicoStatus(strings.NewReader(in), "s.txt")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "s.txt:11" {
		t.Errorf("errors at %q: %v", got, err)
	}
	if len(out) != 3 || out[0].Info != "Active Socket: Connection refused" || out[0].Node != "k8s-master" ||
		out[0].Established() || !out[1].Established() || out[2].Family != "IPv6" || out[2].Peer.String() != "fd00::2" {
		t.Errorf("got %+v", out)
	}
}

func FuzzCalicoStatus(f *testing.F) {
	f.Add("Calico process is running.\n\nIPv4 BGP status\n+--+\n| PEER ADDRESS | PEER TYPE | STATE | SINCE | INFO |\n" +
		"| 10.0.0.11 | node-to-node mesh | start | 16:57:43 | Active Socket: Connection |\n|  |  |  |  | reset by peer |\n")
	f.Add("IPv6 BGP status\n|  | a | b | c | d |\n| ::1 | x | up | 1 | Established |\n|\n||||||\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := CalicoStatus(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, p := range out {
			if p.Pos.Line == 0 || !p.Peer.IsValid() || p.Family == "" {
				t.Fatalf("bad peer: %+v", p)
			}
		}
		sniffCalicoStatus("fuzz.txt", []byte(in))
	})
}
