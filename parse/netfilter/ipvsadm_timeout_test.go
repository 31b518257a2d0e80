package netfilter

import (
	"fmt"
	"strings"
	"testing"

	"github.com/netmortem/netmortem/parse/internal/parsetest"
)

// The timeouts of kubeasz PR 688's description: the kernel's defaults,
// below the command line pasted without a prompt.
func TestIPVSTimeoutsReal(t *testing.T) {
	const file = "fixtures/field/ipvs-idle-timeout--kubeasz-pr-688/ipvsadm-l-timeout.txt"
	out := parsetest.ReadFile(t, file, IPVSTimeouts)
	var got []string
	for _, x := range out {
		got = append(got, fmt.Sprintf("%d %d %d %d", x.Pos.Line, x.TCP, x.TCPFin, x.UDP))
	}
	parsetest.CheckLines(t, file, got, []string{"2 900 120 300"})
}

// A prompt names the node; a line of two numbers and a word are reported
// at their lines, the timeouts around them kept.
func TestIPVSTimeoutsErrors(t *testing.T) {
	in := "root@node-1:~# ipvsadm -l --timeout\nTimeout (tcp tcpfin udp): 7200 120 300\nTimeout (tcp tcpfin udp): 900 120\nnope\n" +
		"$ sudo ipvsadm -L --timeout\nTimeout (tcp tcpfin udp): 900 120 300\n"
	out, err := IPVSTimeouts(strings.NewReader(in), "t.txt")
	if got := parsetest.SyntaxErrorsAt(t, err); got != "t.txt:3 t.txt:4" {
		t.Errorf("errors at %q: %v", got, err)
	}
	if len(out) != 2 || out[0].TCP != 7200 || out[0].Node != "node-1" || out[1].TCP != 900 {
		t.Errorf("got %+v", out)
	}
}

func FuzzIPVSTimeouts(f *testing.F) {
	parsetest.AddSeedFiles(f, []string{"fixtures/field/ipvs-idle-timeout--kubeasz-pr-688/ipvsadm-l-timeout.txt"})
	f.Add("# ipvsadm -l --timeout\nTimeout (tcp tcpfin udp): -1 2 99999999999999999999\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := IPVSTimeouts(strings.NewReader(in), "fuzz.txt")
		parsetest.CheckFuzzErrors(t, err, "fuzz.txt")
		for _, x := range out {
			if x.Pos.Line == 0 || x.TCP < 0 || x.TCPFin < 0 || x.UDP < 0 {
				t.Fatalf("bad timeouts: %+v", x)
			}
		}
		sniffIPVSTimeout("fuzz.txt", []byte(in))
	})
}
