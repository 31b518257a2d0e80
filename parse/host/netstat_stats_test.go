package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// netstat -s of a server namespace whose listen queue overflowed
// (fixtures/scenarios/listen-queue-overflow.sh): the worded counters
// netmortem knows under nstat's names, the named ones under their section.
func TestNetstatStatsReal(t *testing.T) {
	out := parsetest.ReadFile(t, "fixtures/incidents/listen-queue-overflow/netstat-s.txt", NetstatStats)
	var got []string
	for _, c := range out {
		got = append(got, fmt.Sprintf("%d %s %d", c.Pos.Line, c.Name, c.Value))
	}
	parsetest.CheckLines(t, "netstat-s.txt", got, []string{
		"2 IpForwarding 2",
		"8 IpOutTransmits 4",
		"17 TcpActiveOpens 0",
		"18 TcpPassiveOpens 2",
		"19 TcpAttemptFails 0",
		"20 TcpEstabResets 0",
		"21 TcpCurrEstab 2",
		"22 TcpInSegs 24",
		"23 TcpOutSegs 4",
		"24 TcpRetransSegs 0",
		"25 TcpInErrs 0",
		"26 TcpOutRsts 0",
		"29 UdpNoPorts 0",
		"30 UdpInErrors 0",
		"32 UdpRcvbufErrors 0",
		"36 TcpExtDelayedACKs 2",
		"37 TcpExtListenOverflows 18",
		"38 TcpExtListenDrops 18",
		"42 IpExtInOctets 1408",
		"43 IpExtOutOctets 224",
		"44 IpExtInNoECTPkts 24",
	})
}

// Lines cut out with grep have no section: the worded counters are read
// all the same; a prompt names the node; prose is an error at its line.
func TestNetstatStatsGrepAndErrors(t *testing.T) {
	in := "[root@node-3 ~]# netstat -s | grep -i listen\n    667399 times the listen queue of a socket overflowed\n" +
		"    667399 SYNs to LISTEN sockets ignored\nthe counters keep rising\n    TCPTimeouts: 3\n" +
		"    99999999999999999999 SYN cookies sent\n"
	out, err := NetstatStats(strings.NewReader(in), "n.txt")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "n.txt:4 n.txt:6" {
		t.Errorf("errors at %q: %v", got, err)
	}
	var got []string
	for _, c := range out {
		got = append(got, fmt.Sprintf("%d %s %s %d", c.Pos.Line, c.Node, c.Name, c.Value))
	}
	parsetest.CheckLines(t, "n.txt", got, []string{
		"2 node-3 TcpExtListenOverflows 667399",
		"3 node-3 TcpExtListenDrops 667399",
	})
}

func FuzzNetstatStats(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{nstatDir + "netstat-s.txt", nstatDir + "nstat.txt",
		"fixtures/incidents/listen-queue-overflow/netstat-s.txt"})
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NetstatStats(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, c := range out {
			if c.Pos.Line == 0 || c.Name == "" {
				t.Fatalf("bad counter: %+v", c)
			}
		}
	})
}
